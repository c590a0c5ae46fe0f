"""A small long-running program for the preview tests.

On start it prints its threshold and "ready"; on SIGHUP it reloads
settings.py and does the same. A negative threshold raises ValueError: at
start the program exits with the traceback, on a reload it prints the
traceback and keeps running.
"""

import importlib
import signal
import time
import traceback

import settings


def check(value: int) -> int:
    if value < 0:
        raise ValueError(f"threshold must not be negative, got {value}")
    return value


def load() -> None:
    importlib.reload(settings)
    print(f"threshold is {check(settings.THRESHOLD)}")
    print("ready")


def on_hangup(signum: int, frame: object) -> None:
    try:
        load()
    except Exception:
        traceback.print_exc()


def main() -> None:
    load()
    signal.signal(signal.SIGHUP, on_hangup)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
