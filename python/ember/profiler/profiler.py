"""ember.profiler.profile (activities, schedule, on_trace_ready, step) and the pieces
ember.autograd.profiler.profile shares with it: one recording session of the C++ profiler."""
import functools
import os
import socket
import time
import warnings
from enum import Enum

from .. import _C
from ._events import build_event_list

__all__ = ["ProfilerActivity", "ProfilerAction", "schedule", "profile", "record_function",
           "tensorboard_trace_handler", "supported_activities"]


class ProfilerActivity(Enum):
    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


def supported_activities():
    """The activities this machine can record: the CPU, and CUDA with a GPU (kernels through CUPTI)."""
    acts = {ProfilerActivity.CPU}
    if _C._cuda_is_available():
        acts.add(ProfilerActivity.CUDA)
    return acts


class ProfilerAction(Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """Step number -> ProfilerAction: skip `skip_first` steps, then cycles of `wait` idle steps,
    `warmup` steps (profiler on, results dropped) and `active` recorded steps, `repeat` times
    (0: forever). The last active step of each cycle is RECORD_AND_SAVE (on_trace_ready runs)."""
    if not (wait >= 0 and warmup >= 0 and active > 0 and repeat >= 0 and skip_first >= 0):
        raise AssertionError(  # PyTorch asserts here
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} (need >= 0), "
            f"active={active} (need > 0), repeat={repeat} (need >= 0), skip_first={skip_first} (need >= 0).")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results", stacklevel=2)

    def schedule_fn(step):
        if step < 0:
            raise ValueError(f"Invalid step number: {step}")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait:  # the first cycle starts at its warmup
            step += wait
        num_steps = wait + warmup + active
        if repeat > 0 and step // num_steps >= repeat:
            return ProfilerAction.NONE
        return _cycle_action(step % num_steps, wait, warmup, active)

    return schedule_fn


def _cycle_action(mod_step, wait, warmup, active):
    if mod_step < wait:
        return ProfilerAction.NONE
    if mod_step < wait + warmup:
        return ProfilerAction.WARMUP
    return ProfilerAction.RECORD if mod_step < wait + warmup + active - 1 else ProfilerAction.RECORD_AND_SAVE


def _default_schedule(_step):
    return ProfilerAction.RECORD


class record_function:
    """A named range in the profile, as a context manager or a decorator. Costs almost nothing
    while no profiler runs."""

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self.record = None

    def __enter__(self):
        if _C._profiler_enabled():
            self.record = _C._RecordFunction()
            self.record.enter(self.name)
        return self

    def __exit__(self, *exc):
        if self.record is not None:
            self.record.exit()
            self.record = None
        return False

    def __call__(self, fn):
        # a fresh range per call, so recursive and concurrent calls each get their own
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)

        return wrapper


class _ProfileBase:
    """One recording session: start() turns the C++ profiler on, stop() collects the events."""

    def __init__(self, record_shapes=False, profile_memory=False, with_stack=False, use_device=None,
                 keep_host=True):
        self.record_shapes = bool(record_shapes)
        self.profile_memory = bool(profile_memory)
        self.with_stack = bool(with_stack)
        self.use_device = use_device  # "cuda": the GPU's kernels too
        self._keep_host = keep_host
        self.function_events = None
        self._recording = False

    def _start_trace(self):
        why = _C._profiler_start(self.record_shapes, self.profile_memory, self.with_stack, self.use_device == "cuda")
        if why:
            warnings.warn(why, stacklevel=3)
        self._recording = True

    def _stop_trace(self):
        if not self._recording:
            return
        self._recording = False
        raw = _C._profiler_stop()
        self.function_events = build_event_list(raw, self.record_shapes, self.profile_memory, self.use_device,
                                                self._keep_host)

    def _check_finished(self):
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")

    def events(self):
        self._check_finished()
        return self.function_events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        self._check_finished()
        return self.function_events.key_averages(group_by_input_shape, group_by_stack_n)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False):
        self._check_finished()
        return self.function_events.table(sort_by=sort_by, row_limit=row_limit,
                                          max_src_column_width=max_src_column_width,
                                          max_name_column_width=max_name_column_width,
                                          max_shapes_column_width=max_shapes_column_width, header=header,
                                          top_level_events_only=top_level_events_only)

    def export_chrome_trace(self, path):
        self._check_finished()
        return self.function_events.export_chrome_trace(path)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        self._check_finished()
        if not self.with_stack:
            raise RuntimeError("export_stacks() requires with_stack=True")
        return self.function_events.export_stacks(path, metric)

    @property
    def self_cpu_time_total(self):
        self._check_finished()
        return self.function_events.self_cpu_time_total

    def total_average(self):
        self._check_finished()
        return self.function_events.total_average()

    def __str__(self):
        return self.table() if self.function_events is not None else "<unfinished profile>"


class profile(_ProfileBase):
    """ember.profiler.profile: a context manager that records every op, autograd node and
    record_function range on every thread. With a schedule, call prof.step() once per step; each
    finished active cycle calls on_trace_ready(prof)."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, execution_trace_observer=None, acc_events=False, use_cuda=None,
                 custom_trace_id_callback=None, post_processing_timeout_s=None):
        acts = set(activities) if activities is not None else supported_activities()
        if use_cuda:
            acts.add(ProfilerActivity.CUDA)
        for a in acts:
            if not isinstance(a, ProfilerActivity):
                raise TypeError(f"activities must hold ProfilerActivity values, got {type(a).__name__}")
        unsupported = acts - {ProfilerActivity.CPU, ProfilerActivity.CUDA}
        if unsupported:
            warnings.warn(f"Ember profiles the CPU and CUDA only; ignoring {sorted(a.name for a in unsupported)}",
                          stacklevel=2)
        cuda = ProfilerActivity.CUDA in acts
        # the device's work is tied to the host ranges that launched it, so a CUDA-only profile records
        # the host too and keeps only the device's events
        super().__init__(record_shapes, profile_memory, with_stack, "cuda" if cuda else None,
                         keep_host=ProfilerActivity.CPU in acts)
        self.activities = acts
        self._cpu = ProfilerActivity.CPU in acts or cuda
        self.schedule = schedule if schedule is not None else _default_schedule
        self.record_steps = schedule is not None
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.current_action = self.schedule(self.step_num)
        self._step_rec = None
        self._running = False

    # ---- the session follows the schedule's actions
    def _prepare(self):
        if self._cpu and not self._recording:
            self._start_trace()

    def _begin_record(self):
        if self._cpu:
            if self._recording:
                _C._profiler_clear()  # warmup results are dropped
            else:
                self._start_trace()

    def _save(self):
        self._stop_trace()
        if self.on_trace_ready is not None and self.function_events is not None:
            self.on_trace_ready(self)

    def _transit(self, prev, cur):
        A = ProfilerAction
        if prev == A.NONE:
            if cur == A.WARMUP:
                self._prepare()
            elif cur in (A.RECORD, A.RECORD_AND_SAVE):
                self._begin_record()
        elif prev == A.WARMUP:
            if cur == A.NONE:
                warnings.warn("Incorrect schedule: WARMUP followed by NONE", stacklevel=3)
                self._stop_trace()
                self.function_events = None
            elif cur in (A.RECORD, A.RECORD_AND_SAVE):
                self._begin_record()
            elif cur is None:
                warnings.warn("Incorrect schedule: Stopping profiler in WARMUP", stacklevel=3)
                self._stop_trace()
        elif prev == A.RECORD:
            if cur == A.NONE or cur == A.WARMUP:
                warnings.warn(f"Incorrect schedule: RECORD followed by {cur.name}", stacklevel=3)
                self._save()
                if cur == A.WARMUP:
                    self._prepare()
            elif cur is None:
                self._save()
        elif prev == A.RECORD_AND_SAVE:
            self._save()
            if cur == A.WARMUP:
                self._prepare()
            elif cur in (A.RECORD, A.RECORD_AND_SAVE):
                self._begin_record()

    def _enter_step(self):
        if self.record_steps:
            self._step_rec = record_function(f"ProfilerStep#{self.step_num}")
            self._step_rec.__enter__()

    def _exit_step(self):
        if self._step_rec is not None:
            self._step_rec.__exit__(None, None, None)
            self._step_rec = None

    def start(self):
        self._running = True
        self._transit(ProfilerAction.NONE, self.current_action)
        self._enter_step()

    def stop(self):
        self._exit_step()
        if self._running:
            self._running = False
            self._transit(self.current_action, None)

    def step(self):
        """Marks the end of a training step: advances the schedule."""
        self._exit_step()
        prev = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit(prev, self.current_action)
        self._enter_step()

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.stop()
        return False


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False, use_python_export=False):
    """An on_trace_ready callback writing `{worker_name}.{time_ms}.pt.trace.json[.gz]` into dir_name."""

    def handler(prof):
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        name = f"{worker}.{time.time_ns() // 1_000_000}.pt.trace.json" + (".gz" if use_gzip else "")
        prof.export_chrome_trace(os.path.join(dir_name, name))

    return handler
