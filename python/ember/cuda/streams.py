"""CUDA streams and events (torch.cuda.streams): queue order, waiting across streams, timing."""
from .. import _C
from ._device import _device_index, _lazy_init

__all__ = ["Stream", "ExternalStream", "Event", "StreamContext", "current_stream", "default_stream", "set_stream",
           "stream"]


class Stream:
    """A CUDA stream: kernels queued on one run in order; on different streams, concurrently.
    `with ember.cuda.stream(s):` makes it current for the ops in the block."""

    def __init__(self, device=None, priority=0, stream_id=None, device_index=None, **kwargs):
        _lazy_init()
        if stream_id is not None:  # wrap an existing handle (ExternalStream, current_stream())
            self.cuda_stream, self.device_index = int(stream_id), int(device_index)
        else:
            idx = _device_index(device, optional=True)
            self.cuda_stream, self.device_index = _C._cuda_new_stream(idx, int(priority))

    @property
    def device(self):
        return _C.device("cuda", self.device_index)

    def query(self):
        """Whether every kernel queued on the stream has finished."""
        return _C._cuda_stream_query(self.cuda_stream, self.device_index)

    def synchronize(self):
        """Wait until every kernel queued on the stream has finished."""
        _C._cuda_stream_synchronize(self.cuda_stream, self.device_index)

    def wait_event(self, event):
        """Make later work on this stream wait for `event` (the host does not wait)."""
        event.wait(self)

    def wait_stream(self, stream):
        """Make later work on this stream wait for the work queued on `stream` so far."""
        self.wait_event(stream.record_event())

    def record_event(self, event=None):
        """Record an event on this stream (a new one unless given); returns it."""
        event = Event() if event is None else event
        event.record(self)
        return event

    def __eq__(self, other):
        return isinstance(other, Stream) and (self.cuda_stream, self.device_index) == (other.cuda_stream, other.device_index)

    def __hash__(self):
        return hash((self.cuda_stream, self.device_index))

    def __repr__(self):
        return f"<ember.cuda.Stream device=cuda:{self.device_index} cuda_stream={self.cuda_stream:#x}>"


class ExternalStream(Stream):
    """A stream created elsewhere (a cudaStream_t from another library)."""

    def __init__(self, stream_ptr, device=None, **kwargs):
        idx = _device_index(device, optional=True)
        super().__init__(stream_id=stream_ptr, device_index=idx)


def current_stream(device=None):
    """The calling thread's current stream on a device."""
    _lazy_init()
    sid, idx = _C._cuda_current_stream(_device_index(device, optional=True))
    return Stream(stream_id=sid, device_index=idx)


def default_stream(device=None):
    """A device's default stream (handle 0)."""
    _lazy_init()
    sid, idx = _C._cuda_default_stream(_device_index(device, optional=True))
    return Stream(stream_id=sid, device_index=idx)


def set_stream(stream):
    """Make `stream` the calling thread's current stream on its device."""
    if stream is not None:
        _C._cuda_set_stream(stream.cuda_stream, stream.device_index)


class Event:
    """A CUDA event: a point in a stream's work, to wait for, query, or time (enable_timing=True)."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False, **kwargs):
        _lazy_init()
        if interprocess:
            raise NotImplementedError("ember.cuda.Event: interprocess events are not supported")
        self.enable_timing = bool(enable_timing)
        self._event = None  # made on the first record(), on that stream's device

    def record(self, stream=None):
        """Record the event on `stream` (default: the current stream)."""
        stream = current_stream() if stream is None else stream
        if self._event is None:
            self._event = _C._Event("cuda", stream.device_index, self.enable_timing)
        self._event.record(stream.cuda_stream, stream.device_index)

    def wait(self, stream=None):
        """Make later work on `stream` (default: the current one) wait for this event."""
        stream = current_stream() if stream is None else stream
        if self._event is not None:
            self._event.wait(stream.cuda_stream, stream.device_index)

    def query(self):
        """Whether the work before the event has finished (True if never recorded)."""
        return True if self._event is None else self._event.query()

    def synchronize(self):
        """Wait on the host until the work before the event has finished."""
        if self._event is not None:
            self._event.synchronize()

    def elapsed_time(self, end_event):
        """Milliseconds between this event and `end_event` (both recorded, with enable_timing)."""
        if self._event is None or end_event._event is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return self._event.elapsed_time(end_event._event)

    def __repr__(self):
        return f"<ember.cuda.Event enable_timing={self.enable_timing} recorded={self._event is not None}>"


class StreamContext:
    """Makes a stream current for a `with` block (None: no change)."""

    def __init__(self, stream):
        self.stream = stream
        self._prev = None

    def __enter__(self):
        if self.stream is None:
            return None
        self._prev = current_stream(self.stream.device_index)
        set_stream(self.stream)
        return self.stream

    def __exit__(self, *exc):
        if self._prev is not None:
            set_stream(self._prev)
        return False


def stream(stream):
    """Context manager making `stream` current for the ops in its block."""
    return StreamContext(stream)
