"""Time, as a port, so tests can hold it still."""

import time
from typing import Protocol


class Clock(Protocol):
    def now_ms(self) -> int:
        """Unix time in milliseconds."""


class SystemClock:
    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000
