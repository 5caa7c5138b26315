"""Timer: a statement timed the way torch.utils.benchmark times it (Python's timeit underneath, the
intra-op thread count fixed for the measurement, blocks of runs long enough that the timer's own
overhead is noise)."""
import enum
import textwrap
import timeit

from .common import Measurement, TaskSpec, set_torch_threads

__all__ = ["Timer", "timer", "Language"]

timer = timeit.default_timer


class Language(enum.Enum):
    """The statement's language: Python (C++ statements need a compiler toolchain Ember does not drive)."""
    PYTHON = 0
    CPP = 1


def _clean(code):
    code = textwrap.dedent(code)
    return (code[1:] if code.startswith("\n") else code).rstrip()


class Timer:
    """Times `stmt` after `setup`, in `globals` (ember is there as `torch` and `ember`), with
    `num_threads` intra-op threads; labels (label, sub_label, description, env) go to the
    Measurements and arrange Compare's tables."""

    def __init__(self, stmt="pass", setup="pass", global_setup="", timer=timer, globals=None, label=None,
                 sub_label=None, description=None, env=None, num_threads=1, language=Language.PYTHON):
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        if language in (Language.CPP, "cpp", "c++"):
            raise ValueError("C++ statements are not supported by Ember's Timer; time them from C++ "
                             "(benchmarks/bench_cpp_training.py shows how).")
        if language not in (Language.PYTHON, "py", "python"):
            raise ValueError(f"Invalid language `{language}`.")
        if global_setup:
            raise ValueError(f"global_setup is C++ only, got `{global_setup}`. Most likely this code can simply be "
                             "moved to `setup`.")
        import ember
        self._globals = dict(globals or {})
        self._globals.setdefault("torch", ember)
        self._globals.setdefault("ember", ember)
        stmt, setup = _clean(stmt), _clean(setup)
        self._timer = timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup, label=label,
                                   sub_label=sub_label, description=description, env=env, num_threads=num_threads)

    def _timeit(self, number):
        return max(self._timer.timeit(number), 1e-9)

    def timeit(self, number=1000000):
        """One Measurement of `number` runs (after a warm-up of number // 100 runs)."""
        with set_torch_threads(self._task_spec.num_threads):
            self._timeit(max(number // 100, 2))
            return Measurement(number_per_run=number, raw_times=[self._timeit(number)], task_spec=self._task_spec)

    def repeat(self, repeat=-1, number=-1):
        """Not provided, as in PyTorch: use blocked_autorange."""
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None):
        """Not provided, as in PyTorch: use blocked_autorange."""
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _estimate_block_size(self, min_run_time):
        # runs per block: until the timer's own overhead is under 1e-4 of a block (and a block at least
        # min_run_time / 1000), or a block alone exceeds min_run_time
        with set_torch_threads(self._task_spec.num_threads):
            self._timeit(1)  # a first call's one-time costs (library start-up, caches) stay out of the sizing
            overhead = sorted(self._timeit(0) for _ in range(5))[2]
            number = 1
            while True:
                took = self._timeit(number)
                if (overhead / took <= 1e-4 and took >= min_run_time / 1000) or took > min_run_time:
                    return number
                if number * 10 > 2147483647:
                    return number
                number *= 10

    def _loop(self, number, stop, min_run_time, max_run_time=None, callback=None):
        total, times = 0.0, []
        with set_torch_threads(self._task_spec.num_threads):
            while True:
                spent = self._timeit(number)
                times.append(spent)
                total += spent
                if callback:
                    callback(number, spent)
                done = stop(times)
                if max_run_time and total > max_run_time:
                    break
                if total >= min_run_time and done:
                    break
        return times

    def blocked_autorange(self, callback=None, min_run_time=0.2):
        """Blocks of runs (sized so the timer's overhead is negligible) until `min_run_time` seconds
        are spent; one Measurement with a time per block. callback(number, seconds) sees each block."""
        number = self._estimate_block_size(min_run_time)
        times = self._loop(number, lambda t: True, min_run_time, callback=callback)
        return Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)

    def adaptive_autorange(self, threshold=0.1, *, min_run_time=0.01, max_run_time=10.0, callback=None):
        """Blocks of runs until the spread is small (IQR / median under `threshold`, with more than 3
        blocks and min_run_time spent), or max_run_time is spent."""
        number = self._estimate_block_size(min_run_time=0.05)

        def stop(times):
            return len(times) > 3 and Measurement(number, times, self._task_spec).meets_confidence(threshold)
        times = self._loop(number, stop, min_run_time, max_run_time, callback=callback)
        return Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)
