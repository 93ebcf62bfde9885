"""Progress of the long commands: a bar on a terminal, plain lines everywhere else.

A tqdm bar redraws one line with carriage returns: on a terminal that is the best view,
but in a log file, a notebook or a CI job it shows nothing until the end (or a smear of
redraws). Where the output is not a terminal, ``dgan train`` and ``dgan evaluate`` print
plain, complete lines instead, every ``--progress-every`` seconds (`EVERY`): what is
being done, how far along, the time elapsed and an estimate of the time left.

Example:
    >>> import io
    >>> from dgan.train.loop import ProgressInfo
    >>> log, now = io.StringIO(), iter([0.0, 1.0, 61.0])
    >>> lines = TrainingLines(log, every=60, clock=lambda: next(now))
    >>> lines(ProgressInfo(0, 2, 0, 10, step=0, total_steps=20))  # step 1: no losses read
    >>> lines(ProgressInfo(0, 2, 9, 10, step=9, total_steps=20,
    ...                    losses={"discriminator_loss": 0.51, "generator_loss": -1.2}))
    >>> for part in log.getvalue().strip().split("; "):  # one line, here in three parts
    ...     print(part)
    training: step 10 of 20 (50%), epoch 1 of 2
    losses: discriminator 0.51, generator -1.2
    1:01 elapsed, about 1:07 left
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, TextIO

from tqdm.auto import tqdm

from dgan.train.distributed import is_main_process
from dgan.train.loop import ProgressInfo

EVERY = 60.0
"""Seconds between progress lines (``--progress-every``'s default)."""

_LOSS_WORDS = {
    "discriminator_loss": "discriminator",
    "attribute_discriminator_loss": "attribute discriminator",
    "temporal_discriminator_loss": "temporal discriminator",
    "envelope_discriminator_loss": "envelope discriminator",
    "generator_loss": "generator",
}


def on_terminal(stream: TextIO) -> bool:
    """Whether ``stream`` shows a progress bar well: a terminal that can redraw a line.

    Example:
        >>> import io
        >>> on_terminal(io.StringIO())
        False
    """
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and os.environ.get("TERM") != "dumb"


def training_progress(every: float = EVERY, seconds_left: float | None = None) -> dict[str, Any]:
    """The progress arguments of `dgan.DGAN.train_dataframe` for a command: the library's
    bar on a terminal, else `TrainingLines` on stderr (under torchrun, rank 0's).

    Example:
        >>> sorted(training_progress())  # pytest's stderr is not a terminal
        ['progress_bar', 'progress_callback']
    """
    if on_terminal(sys.stderr):
        return {"progress_bar": None}  # shown where stderr is a terminal
    if not is_main_process():
        return {"progress_bar": False}
    lines = TrainingLines(sys.stderr, every=every, seconds_left=seconds_left)
    return {"progress_bar": False, "progress_callback": lines}


@contextlib.contextmanager
def evaluation_progress(every: float = EVERY) -> Iterator[EvaluationProgress]:
    """An `EvaluationProgress` on stderr for the ``with`` block, closed at its end.

    Example:
        >>> with evaluation_progress() as progress:
        ...     progress("marginals, seed 1 of 1", 0.0)
    """
    progress = EvaluationProgress(sys.stderr, every=every)
    try:
        yield progress
    finally:
        progress.close()


def clock_time(seconds: float) -> str:
    """``seconds`` as a clock reads: M:SS, or H:MM:SS from an hour on.

    Example:
        >>> clock_time(5), clock_time(125.4), clock_time(3725)
        ('0:05', '2:05', '1:02:05')
    """
    minutes, secs = divmod(int(max(seconds, 0.0) + 0.5), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class TrainingLines:
    """A ``progress_callback`` for training that writes a plain line to ``stream``:
    after ``every`` / 2 seconds, then every ``every`` seconds, and at the end of the epoch
    that completes each tenth of the budget (unless a line came in the last ``every`` / 6
    seconds). Lines come only where training reads its losses from the device anyway
    (`ProgressInfo.losses`): never one per step, and never a wait for the device.

    ``seconds_left`` is what is left of the time budget when training starts (None
    without one): the estimate is at most that.
    """

    def __init__(
        self,
        stream: TextIO | None = None,
        every: float = EVERY,
        seconds_left: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream, self.every, self.clock = stream or sys.stderr, every, clock
        self.start = clock()
        self.deadline = None if seconds_left is None else self.start + seconds_left
        self.last_line = self.start - every / 2  # the first line after every / 2
        self.tenths = 0
        self.first: tuple[int, float] | None = None  # (step, time): the speed's origin

    def __call__(self, info: ProgressInfo) -> None:
        now = self.clock()
        step, total = (info.step or 0) + 1, info.total_steps or 1  # steps done, of total
        if self.first is None:  # the first step also pays for setup: timed from its end
            self.first = (step, now)
        if info.losses is None:
            return
        tenths = math.floor(10 * step / total)
        milestone = tenths > self.tenths and info.batch == info.total_batches - 1
        self.tenths = max(self.tenths, tenths)
        since = now - self.last_line
        if since >= self.every or (milestone and since >= self.every / 6):
            self.last_line = now
            print(self._line(info, step, total, now), file=self.stream, flush=True)

    def _line(self, info: ProgressInfo, step: int, total: int, now: float) -> str:
        losses = ", ".join(
            f"{word} {info.losses[name]:.3g}"
            for name, word in _LOSS_WORDS.items()
            if info.losses.get(name) is not None
        )
        line = (
            f"training: step {step:,} of {total:,} ({100 * step / total:.0f}%), "
            f"epoch {info.epoch + 1} of {info.total_epochs}; losses: {losses}; "
            f"{clock_time(now - self.start)} elapsed"
        )
        first_step, first_time = self.first
        if step > first_step:
            left = (now - first_time) / (step - first_step) * (total - step)
            budget = None if self.deadline is None else max(self.deadline - now, 0.0)
            if budget is not None and budget < left:
                return f"{line}, at most {clock_time(budget)} left (the time budget)"
            line += f", about {clock_time(left)} left"
        return line


class EvaluationProgress:
    """The ``progress`` callback of `dgan.metrics.evaluate`: what is being computed, how
    far along, the time elapsed and left. On a terminal a tqdm bar; elsewhere a line for
    each step that runs longer than ``every`` / 30 seconds (the slow metrics: quick ones
    come and go unprinted), repeated every ``every`` seconds while it runs. Call `close`
    at the end.
    """

    def __init__(
        self,
        stream: TextIO | None = None,
        every: float = EVERY,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream, self.every, self.clock = stream or sys.stderr, every, clock
        self.start = clock()
        self.what, self.fraction = "", 0.0
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._generation = 0  # of the pending timer: one that fires late is ignored
        self._bar = None
        if on_terminal(self.stream):
            self._bar = tqdm(
                total=1000,  # thousandths of the work
                desc="evaluate",
                file=self.stream,
                bar_format="{desc} {percentage:3.0f}%|{bar}| {elapsed} elapsed, {remaining} left",
            )

    def __call__(self, what: str, fraction: float) -> None:
        with self._lock:
            self.what, self.fraction = what, min(max(fraction, 0.0), 1.0)
            if self._bar is not None:
                last = " (the last step)" if self.fraction >= 1 else ""
                self._bar.set_description_str(f"evaluate: {what}{last}", refresh=False)
                self._bar.update(round(1000 * self.fraction) - self._bar.n)
                return
            self._cancel()
            if self.every <= 0:
                self._write()
            else:
                self._schedule(self.every / 30)

    def close(self) -> None:
        """Stop printing (the bar closes, a pending line is dropped)."""
        with self._lock:
            self._cancel()
            if self._bar is not None:
                self._bar.close()

    def line(self) -> str:
        """The line for the step running now."""
        elapsed = self.clock() - self.start
        # The counted work is done: what runs now (the copy check) is last, not "100% done".
        if self.fraction >= 1:
            return f"evaluate: {self.what} (the last step, {clock_time(elapsed)} elapsed)"
        line = (
            f"evaluate: {self.what} ({100 * self.fraction:.0f}% done, {clock_time(elapsed)} elapsed"
        )
        if self.fraction > 0:
            line += f", about {clock_time(elapsed * (1 - self.fraction) / self.fraction)} left"
        return line + ")"

    def _write(self) -> None:
        print(self.line(), file=self.stream, flush=True)

    def _schedule(self, delay: float) -> None:
        self._timer = threading.Timer(delay, self._fire, args=(self._generation,))
        self._timer.daemon = True  # never keeps a finished or interrupted command alive
        self._timer.start()

    def _fire(self, generation: int) -> None:
        with self._lock:
            if generation != self._generation:  # cancelled while it waited for the lock
                return
            self._write()
            self._schedule(self.every)  # still running: say so again later

    def _cancel(self) -> None:
        self._generation += 1
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
