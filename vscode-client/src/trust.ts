/**
 * Workspace trust: in a workspace the person has not trusted, Rein starts no
 * server (so no gate, preview or MCP command of the workspace runs) and says
 * why; `onDidGrantWorkspaceTrust` starts it once trusted. The settings that
 * run programs or send data are also `restrictedConfigurations` in
 * package.json, so an untrusted workspace's values of them are ignored.
 */

/** Why nothing runs in an untrusted workspace, and what to do. */
export const UNTRUSTED_DETAIL =
  'Rein starts its server and runs commands only in a trusted workspace: trust this workspace to use Rein.';

/** The connection state to show instead of starting, or undefined when the server may start. */
export function trustGate(trusted: boolean): { state: 'untrusted'; detail: string } | undefined {
  return trusted ? undefined : { state: 'untrusted', detail: UNTRUSTED_DETAIL };
}
