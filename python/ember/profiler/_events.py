"""Profiler results: FunctionEvent (one recorded range), FunctionEventAvg (a key_averages row),
EventList (table, chrome trace) built from what the C++ profiler hands back."""
import gzip
import json
import os
import socket
from collections import OrderedDict

__all__ = ["Interval", "FunctionEvent", "FunctionEventAvg", "EventList"]

# event kinds as csrc/ember/profiler/profiler.h numbers them
_KIND_OP, _KIND_USER, _KIND_BACKWARD = 0, 1, 2
_MEMORY_NAME = "[memory]"


def _format_time(time_us):
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_time_share(time_us, total_us):
    if total_us == 0:
        return "NaN"
    return f"{time_us * 100.0 / total_us:.2f}%"


def _format_memory(nbytes):
    kb, mb, gb = 1024, 1024 ** 2, 1024 ** 3
    if abs(nbytes) >= gb:
        return f"{nbytes / gb:.2f} GB"
    if abs(nbytes) >= mb:
        return f"{nbytes / mb:.2f} MB"
    if abs(nbytes) >= kb:
        return f"{nbytes / kb:.2f} KB"
    return f"{nbytes} B"


class Interval:
    def __init__(self, start, end):
        self.start = start
        self.end = end

    def elapsed_us(self):
        return self.end - self.start

    def __repr__(self):
        return f"Interval(start={self.start}, end={self.end})"


class _CpuTimes:
    """The averaged and formatted CPU times both event kinds show (needs count, cpu_time_total,
    self_cpu_time_total)."""

    @property
    def cpu_time(self):
        return self.cpu_time_total / max(self.count, 1)

    cpu_time_str = property(lambda self: _format_time(self.cpu_time))
    cpu_time_total_str = property(lambda self: _format_time(self.cpu_time_total))
    self_cpu_time_total_str = property(lambda self: _format_time(self.self_cpu_time_total))


class FunctionEvent(_CpuTimes):
    """One recorded range: an op, an autograd node, a record_function range or an allocation
    outside every range ([memory]). Times are in microseconds from the start of the profile."""

    def __init__(self, id, name, thread, start_us, end_us, kind=_KIND_OP, input_shapes=None, input_types=None,
                 stack=None, sequence_nr=-1, fwd_thread=None, self_cpu_memory_usage=0, alloc_bytes=0, freed_bytes=0):
        self.id = id
        self.name = name
        self.key = name
        self.thread = thread
        self.time_range = Interval(start_us, end_us)
        self.kind = kind
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.input_types = input_types if input_types is not None else []
        self.stack = stack if stack is not None else []
        self.sequence_nr = sequence_nr
        self.fwd_thread = fwd_thread
        self.self_cpu_memory_usage = self_cpu_memory_usage
        self.cpu_memory_usage = self_cpu_memory_usage  # + the children's, filled in by EventList
        self.alloc_bytes = alloc_bytes
        self.freed_bytes = freed_bytes
        self.cpu_children = []
        self.cpu_parent = None
        self.count = 1
        self.device_type = "CPU"
        self.is_async = False

    def append_cpu_child(self, child):
        self.cpu_children.append(child)

    def set_cpu_parent(self, parent):
        self.cpu_parent = parent

    @property
    def is_user_annotation(self):
        return self.kind == _KIND_USER

    @property
    def cpu_time_total(self):
        return self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)


    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} thread={self.thread} "
                f"cpu_time={_format_time(self.cpu_time_total)} self_cpu_time={_format_time(self.self_cpu_time_total)} "
                f"start_us={self.time_range.start:.3f} end_us={self.time_range.end:.3f} "
                f"input_shapes={self.input_shapes} sequence_nr={self.sequence_nr} "
                f"cpu_memory_usage={self.cpu_memory_usage}>")


class FunctionEventAvg(_CpuTimes):
    """The sum of the events sharing a key (name, and input shapes / stack when grouped by them)."""

    def __init__(self):
        self.key = None
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.input_shapes = None
        self.stack = None
        self.node_id = 0
        self.is_user_annotation = False

    def add(self, other):
        if self.key is None:
            self.key = other.key
            self.input_shapes = other.input_shapes
            self.stack = other.stack
            self.is_user_annotation = other.is_user_annotation
        self.count += other.count
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        return self

    def __iadd__(self, other):
        return self.add(other)


    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={_format_time(self.self_cpu_time_total)} "
                f"cpu_time={_format_time(self.cpu_time)} count={self.count} input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage}>")


class EventList(list):
    """A list of FunctionEvents (ordered by start time) with table / trace / averaging helpers."""

    def __init__(self, *args, memory_records=(), pid=0, base_us=0.0, profile_memory=False, record_shapes=False,
                 base_time_ns=0):
        super().__init__(*args)
        self._memory_records = list(memory_records)
        self._pid = pid
        self._base_us = base_us  # steady-clock time (us) of time 0, for the trace's timestamps
        self._base_time_ns = base_time_ns  # steady clock + this = Unix time (ns)
        self._profile_memory = profile_memory
        self._record_shapes = record_shapes

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shapes=False, group_by_stack_n=0):
        groups = OrderedDict()
        for e in self:
            key = (e.key,)
            if group_by_input_shapes:
                key += (str(e.input_shapes),)
            if group_by_stack_n > 0:
                key += tuple(e.stack[:group_by_stack_n])
            groups.setdefault(key, FunctionEventAvg()).add(e)
        out = EventList(groups.values(), profile_memory=self._profile_memory, record_shapes=self._record_shapes)
        out._grouped_by_shapes = group_by_input_shapes
        out._stack_n = group_by_stack_n
        return out

    def total_average(self):
        total = FunctionEventAvg()
        for e in self:
            total.add(e)
        total.key = "Total"
        return total

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None):
        return _build_table(self, sort_by=sort_by, row_limit=row_limit, max_src_column_width=max_src_column_width,
                            max_name_column_width=max_name_column_width,
                            max_shapes_column_width=max_shapes_column_width, header=header,
                            top_level_events_only=top_level_events_only)

    def __str__(self):
        return self.table()

    # ------------------------------------------------------------ Chrome trace
    def _trace_events(self):
        pid = self._pid
        evs = [{"ph": "M", "name": "process_name", "ts": self._base_us, "pid": pid, "tid": 0,
                "args": {"name": "python3"}},
               {"ph": "M", "name": "process_labels", "ts": self._base_us, "pid": pid, "tid": 0,
                "args": {"labels": "CPU"}}]
        for tid in sorted({e.thread for e in self} | {m[0] for m in self._memory_records}):
            evs.append({"ph": "M", "name": "thread_name", "ts": self._base_us, "pid": pid, "tid": tid,
                        "args": {"name": f"thread {tid}"}})
            evs.append({"ph": "M", "name": "thread_sort_index", "ts": self._base_us, "pid": pid, "tid": tid,
                        "args": {"sort_index": tid}})
        # a flow arrow from the forward op that made each autograd node to the node's backward run:
        # the innermost forward op holding the sequence number starts it
        flow_src = {}
        for e in self:
            if e.kind == _KIND_OP and e.sequence_nr >= 0:
                flow_src[e.sequence_nr] = e
        flow_dst = {e.sequence_nr: e for e in self
                    if e.kind == _KIND_BACKWARD and e.sequence_nr >= 0 and not e.name.startswith("autograd::engine")}
        for idx, e in enumerate(self):
            if e.name == _MEMORY_NAME:
                continue
            args = {"External id": e.id}
            if e.sequence_nr >= 0:
                args["Sequence number"] = e.sequence_nr
                args["Fwd thread id"] = e.fwd_thread if e.fwd_thread is not None else 0
            if self._record_shapes and (e.kind == _KIND_OP or e.input_shapes):
                args["Input type"] = list(e.input_types)
                args["Input Dims"] = [list(s) for s in e.input_shapes]
            if e.stack:
                args["Call stack"] = ";".join(e.stack)
            args["Ev Idx"] = idx
            evs.append({"ph": "X", "cat": "user_annotation" if e.kind == _KIND_USER else "cpu_op", "name": e.name,
                        "pid": pid, "tid": e.thread, "ts": round(self._base_us + e.time_range.start, 3),
                        "dur": round(e.time_range.elapsed_us(), 3), "args": args})
            if e.sequence_nr in flow_dst and flow_src.get(e.sequence_nr) is e:
                evs.append({"ph": "s", "id": e.sequence_nr, "pid": pid, "tid": e.thread,
                            "ts": round(self._base_us + e.time_range.start, 3), "cat": "fwdbwd", "name": "fwdbwd"})
            if e.kind == _KIND_BACKWARD and flow_dst.get(e.sequence_nr) is e and e.sequence_nr in flow_src:
                evs.append({"ph": "f", "id": e.sequence_nr, "pid": pid, "tid": e.thread,
                            "ts": round(self._base_us + e.time_range.start, 3), "cat": "fwdbwd", "name": "fwdbwd", "bp": "e"})
        for tid, ts, nbytes, total, addr in self._memory_records:
            evs.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": _MEMORY_NAME, "pid": pid, "tid": tid,
                        "ts": round(self._base_us + ts, 3),
                        "args": {"Total Reserved": total, "Total Allocated": total, "Bytes": nbytes,
                                 "Device Id": -1, "Device Type": 0, "Addr": addr}})
        return evs

    def export_chrome_trace(self, path):
        """Writes the events as Chrome trace JSON (chrome://tracing, Perfetto); .gz paths are gzipped."""
        doc = {"schemaVersion": 1, "deviceProperties": [], "host_name": socket.gethostname(),
               "profile_memory": int(self._profile_memory), "record_shapes": int(self._record_shapes),
               "displayTimeUnit": "ms", "baseTimeNanoseconds": self._base_time_ns, "traceEvents": self._trace_events(), "traceName": os.fspath(path)}
        opener = gzip.open if os.fspath(path).endswith(".gz") else open
        with opener(path, "wt") as f:
            json.dump(doc, f)
        return path

    def export_stacks(self, path, metric="self_cpu_time_total"):
        """Flame-graph input: one line per distinct Python stack, `outer;...;inner;op value`."""
        totals = OrderedDict()
        for e in self:
            if not e.stack:
                continue
            key = ";".join(list(reversed(e.stack)) + [e.name])
            totals[key] = totals.get(key, 0) + getattr(e, metric)
        with open(path, "w") as f:
            for key, v in totals.items():
                f.write(f"{key} {int(v)}\n")


def build_event_list(raw, record_shapes=False, profile_memory=False):
    """FunctionEvents from _C._profiler_stop()'s dict (see csrc/python/profiler_bindings.cpp)."""
    start_ns = raw["start_ns"]
    events, mem_records = [], []
    fwd_threads = {}  # sequence number -> the thread whose forward op made the node
    next_id = 0
    for tid, raw_events, raw_memory in raw["threads"]:
        built = []
        for (name, kind, s, e, seq, parent, alloc, freed, shapes, dtypes, stack) in raw_events:
            ev = FunctionEvent(next_id, name, tid, (s - start_ns) / 1e3, (e - start_ns) / 1e3, kind=kind,
                               input_shapes=shapes, input_types=dtypes, stack=stack, sequence_nr=seq,
                               self_cpu_memory_usage=alloc - freed, alloc_bytes=alloc, freed_bytes=freed)
            next_id += 1
            if parent >= 0:
                ev.set_cpu_parent(built[parent])
                built[parent].append_cpu_child(ev)
            if kind == _KIND_OP and seq >= 0:
                ev.fwd_thread = tid
                fwd_threads.setdefault(seq, tid)
            built.append(ev)
        for ev in reversed(built):  # children come after their parent
            if ev.cpu_parent is not None:
                ev.cpu_parent.cpu_memory_usage += ev.cpu_memory_usage
        for ts, nbytes, total, addr, owner in raw_memory:
            ts_us = (ts - start_ns) / 1e3
            mem_records.append((tid, ts_us, nbytes, total, addr))
            if owner < 0:  # outside every range: its own row, as PyTorch shows it
                built.append(FunctionEvent(next_id, _MEMORY_NAME, tid, ts_us, ts_us, kind=_KIND_OP,
                                           self_cpu_memory_usage=nbytes,
                                           alloc_bytes=max(nbytes, 0), freed_bytes=max(-nbytes, 0)))
                next_id += 1
        events += built
    for ev in events:
        if ev.kind == _KIND_BACKWARD and ev.sequence_nr >= 0:
            ev.fwd_thread = fwd_threads.get(ev.sequence_nr)
    events.sort(key=lambda ev: (ev.time_range.start, -ev.time_range.end, ev.id))
    # trace timestamps stay on the steady clock: epoch microseconds (~1.8e15) would lose sub-microsecond
    # precision in a double; baseTimeNanoseconds in the trace converts them to Unix time
    return EventList(events, memory_records=mem_records, pid=raw["pid"], base_us=start_ns / 1e3,
                     profile_memory=profile_memory, record_shapes=record_shapes,
                     base_time_ns=raw["epoch_offset_ns"])


_SORT_KEYS = ("cpu_time", "cpu_time_total", "self_cpu_time_total", "cpu_memory_usage", "self_cpu_memory_usage",
              "count")


def _build_table(events, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
                 max_shapes_column_width=80, header=None, top_level_events_only=False):
    """PyTorch's profiler table: right-aligned columns two spaces apart, the footer with the total."""
    if len(events) == 0:
        return ""
    rows = list(events)
    if sort_by is not None:
        if sort_by not in _SORT_KEYS and not all(hasattr(e, sort_by) for e in rows):
            raise AttributeError(f"'FunctionEventAvg' object has no attribute '{sort_by}'")
        rows = sorted(rows, key=lambda e: getattr(e, sort_by), reverse=True)
    if top_level_events_only:
        rows = [e for e in rows if getattr(e, "cpu_parent", None) is None]
    if isinstance(rows[0], FunctionEventAvg):  # averages show shapes only when grouped by them
        has_shapes = getattr(events, "_grouped_by_shapes", False)
    else:
        has_shapes = any(e.input_shapes for e in events)
    stack_n = getattr(events, "_stack_n", 0)
    has_memory = events._profile_memory or any(e.cpu_memory_usage for e in rows)

    name_w = min(max(len(e.key) for e in events) + 4, max_name_column_width)
    cols = [("Name", name_w, lambda e: e.key if len(e.key) <= name_w else e.key[:name_w - 3] + "...")]
    total = sum(e.self_cpu_time_total for e in events)
    w = 12
    cols += [("Self CPU %", w, lambda e: _format_time_share(e.self_cpu_time_total, total)),
             ("Self CPU", w, lambda e: _format_time(e.self_cpu_time_total)),
             ("CPU total %", w, lambda e: _format_time_share(e.cpu_time_total, total)),
             ("CPU total", w, lambda e: _format_time(e.cpu_time_total)),
             ("CPU time avg", w, lambda e: _format_time(e.cpu_time))]
    if has_memory:
        cols += [("CPU Mem", w, lambda e: _format_memory(e.cpu_memory_usage)),
                 ("Self CPU Mem", w, lambda e: _format_memory(e.self_cpu_memory_usage))]
    cols.append(("# of Calls", w, lambda e: str(e.count)))
    if has_shapes:
        shapes_w = min(max(len(str(e.input_shapes)) for e in events) + 4, max_shapes_column_width)
        cols.append(("Input Shapes", shapes_w, lambda e: str(e.input_shapes)[:shapes_w]))
    if stack_n > 0:
        src_w = min(max((len(s) for e in events for s in (e.stack or [])), default=0) + 4, max_src_column_width)
        cols.append(("Source Location", src_w, None))

    sep = "".join("-" * cw + "  " for _, cw, _ in cols)
    lines = []
    if header is not None:
        lines += ["=" * (len(sep) - 2), header]
    lines += [sep, "".join(f"{title:>{cw}}  " for title, cw, _ in cols), sep]
    for e in rows[:row_limit] if row_limit is not None and row_limit >= 0 else rows:
        cells = []
        for title, cw, fmt in cols:
            if fmt is None:  # source location: the first stack frame on this line, more below
                cells.append(f"{(e.stack[0] if e.stack else ''):<{cw}}"[:cw] + "  ")
            else:
                cells.append(f"{fmt(e):>{cw}}  ")
        lines.append("".join(cells))
        if stack_n > 0 and e.stack:
            pad = "".join(" " * cw + "  " for _, cw, _ in cols[:-1])
            for frame in e.stack[1:stack_n]:
                lines.append(pad + frame[:cols[-1][1]])
    lines.append(sep)
    lines.append(f"Self CPU time total: {_format_time(total)}")
    return "\n".join(lines) + "\n"
