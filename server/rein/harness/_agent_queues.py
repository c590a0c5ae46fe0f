"""The Agent's steering and follow-up queues: what a caller queues while a
run is active (a steer at the next turn boundary, a follow-up as a run of
its own), and the external steering source the queue also drains."""

from __future__ import annotations

from collections import deque

from rein.harness.config import HarnessConfig, QueueMode
from rein.harness.messages import UserMessage
from rein.harness.run.steering import (
    ExternalSteeringProbe,
    ExternalSteeringSource,
    Steering,
    SteeringSignal,
)

__all__ = ["MessageQueues", "take"]


def take(queue: deque[UserMessage], mode: QueueMode) -> list[UserMessage]:
    if not queue:
        return []
    if mode == "all":
        items = list(queue)
        queue.clear()
        return items
    return [queue.popleft()]


def _queued(message: str | UserMessage, origin: str) -> UserMessage:
    if isinstance(message, UserMessage):
        return message
    return UserMessage(content=message, origin=origin)


class MessageQueues:
    """Mixed into :class:`~rein.harness.agent.Agent`."""

    config: HarnessConfig
    _steering: Steering
    _follow_ups: deque[UserMessage]

    def steer(self, message: str | UserMessage) -> None:
        """Inject a message at the next turn boundary (after the current
        turn, before the next model call). Running tools see
        ``ctx.steering_arrived`` set. Text becomes a user message of origin
        "steer"; a UserMessage is queued as it is."""
        self._steering.mode = self.config.steering_mode
        self._steering.steer(_queued(message, "steer"))

    def poke_steering(self) -> None:
        """Wake the running tools' soft yield without queueing anything (the
        owner of an external inbox saw mail land); delivery stays at the
        boundary, once."""
        self._steering.poke()

    @property
    def steering_arrived(self) -> SteeringSignal:
        """The current tool phase's arrival signal (``await ....wait()``)."""
        return self._steering.signal

    @property
    def has_steering(self) -> bool:
        """Steering messages are still queued (after the run's last drain
        point): the host decides whether to run or drop them."""
        return self._steering.pending

    @property
    def external_steering_source(self) -> ExternalSteeringSource | None:
        return self._steering.external_source

    @external_steering_source.setter
    def external_steering_source(self, source: ExternalSteeringSource | None) -> None:
        self._steering.external_source = source

    @property
    def external_steering_probe(self) -> ExternalSteeringProbe | None:
        return self._steering.external_probe

    @external_steering_probe.setter
    def external_steering_probe(self, probe: ExternalSteeringProbe | None) -> None:
        self._steering.external_probe = probe

    def follow_up(self, message: str | UserMessage) -> None:
        """Queue a message that starts a new run when the agent would stop
        (text becomes a user message of origin "follow_up"; a UserMessage is
        queued as it is)."""
        self._follow_ups.append(_queued(message, "follow_up"))

    def has_queued_messages(self) -> bool:
        return bool(self._steering.pending or self._follow_ups)

    def clear_steering_queue(self) -> None:
        self._steering.clear()

    def clear_follow_up_queue(self) -> None:
        self._follow_ups.clear()

    def clear_all_queues(self) -> None:
        self._steering.clear()
        self._follow_ups.clear()

    def drain_steering_queue(self) -> list[UserMessage]:
        """Remove and return every queued steering message."""
        return self._steering.drain()
