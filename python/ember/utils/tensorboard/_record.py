"""TFRecord framing and the event file: CRC32C (Castagnoli), records, and a buffered writer.

A record is: uint64 length, uint32 masked CRC32C of those 8 bytes, the data, uint32 masked
CRC32C of the data (all little-endian). TensorBoard's reader checks both checksums.
"""
import os
import socket
import struct
import threading
import time
import weakref
import atexit

from . import _proto


def _make_table():
    poly = 0x82F63B78  # CRC-32C polynomial, bit-reversed
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ poly if crc & 1 else crc >> 1
        table.append(crc)
    return tuple(table)


_CRC_TABLE = _make_table()


def crc32c(data, crc=0):
    """CRC-32C of `data` (bytes-like), continuing from `crc`."""
    table = _CRC_TABLE
    crc ^= 0xFFFFFFFF
    for byte in bytes(data):
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc32c(data):
    """TFRecord's masked checksum: rotate right by 15 and add a constant, so that checksums of
    data that itself holds checksums don't degenerate."""
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def encode_record(data):
    header = struct.pack("<Q", len(data))
    return (header + struct.pack("<I", masked_crc32c(header)) + data
            + struct.pack("<I", masked_crc32c(data)))


def read_records(path):
    """Yields the data of each record in a TFRecord file, checking lengths and checksums."""
    with open(path, "rb") as f:
        blob = f.read()
    pos = 0
    while pos < len(blob):
        if pos + 12 > len(blob):
            raise ValueError(f"{path}: truncated record header at byte {pos}")
        header = blob[pos:pos + 8]
        (length,) = struct.unpack("<Q", header)
        (header_crc,) = struct.unpack("<I", blob[pos + 8:pos + 12])
        if header_crc != masked_crc32c(header):
            raise ValueError(f"{path}: corrupt record length at byte {pos}")
        end = pos + 12 + length
        if end + 4 > len(blob):
            raise ValueError(f"{path}: truncated record at byte {pos}")
        data = blob[pos + 12:end]
        (data_crc,) = struct.unpack("<I", blob[end:end + 4])
        if data_crc != masked_crc32c(data):
            raise ValueError(f"{path}: corrupt record data at byte {pos}")
        yield data
        pos = end + 4


class RecordWriter:
    """Frames each write() as one TFRecord on a binary file-like object."""

    def __init__(self, writer):
        self._writer = writer

    def write(self, data):
        self._writer.write(encode_record(data))

    def flush(self):
        self._writer.flush()

    def close(self):
        self._writer.close()

    @property
    def closed(self):
        return self._writer.closed


class _Counter:
    """Process-wide file number, so that two writers created in the same second differ."""

    def __init__(self):
        self._value = 0
        self._lock = threading.Lock()

    def next(self):
        with self._lock:
            value = self._value
            self._value += 1
            return value


_file_counter = _Counter()
_open_writers = weakref.WeakSet()


@atexit.register
def _flush_open_writers():
    # events still queued at interpreter exit would otherwise be lost
    for writer in list(_open_writers):
        try:
            writer.close()
        except Exception:
            pass


class EventFileWriter:
    """Appends serialized Event messages to events.out.tfevents.<time>.<host>.<pid>.<n><suffix>.

    Events are queued in memory and written when `max_queue` are pending, when `flush_secs` have
    passed (a background timer checks), or on flush()/close(), so a training loop does no file I/O
    for most add_* calls.
    """

    def __init__(self, logdir, max_queue=10, flush_secs=120, filename_suffix=""):
        self._logdir = str(logdir)
        os.makedirs(self._logdir, exist_ok=True)
        name = "events.out.tfevents.%010d.%s.%s.%s" % (
            time.time(), socket.gethostname(), os.getpid(), _file_counter.next())
        self._path = os.path.join(self._logdir, name) + filename_suffix
        self._file = open(self._path, "wb")
        self._max_queue = max(int(max_queue), 1)
        self._flush_secs = flush_secs
        self._pending = []
        self._lock = threading.Lock()
        self._closed = False
        self._stop = threading.Event()
        self._timer = None
        if flush_secs and flush_secs > 0:
            # the thread holds only a weak reference, so an unclosed writer can still be collected
            self._timer = threading.Thread(
                target=EventFileWriter._flush_periodically,
                args=(weakref.ref(self), self._stop, flush_secs), daemon=True,
                name="ember-tensorboard-flush")
            self._timer.start()
        _open_writers.add(self)
        self.add_event(_proto.event(
            wall_time=time.time(), file_version="brain.Event:2",
            source_metadata=_proto.source_metadata("tensorboard.summary.writer.event_file_writer")))
        self.flush()

    @property
    def path(self):
        return self._path

    def get_logdir(self):
        return self._logdir

    def add_event(self, event_bytes):
        with self._lock:
            if self._closed:
                raise IOError("Writer is closed")
            self._pending.append(event_bytes)
            if len(self._pending) >= self._max_queue:
                # a full queue forces the events to disk, as torch documents for max_queue
                self._write_pending()
                self._file.flush()

    def _write_pending(self):
        if self._pending:
            self._file.write(b"".join(encode_record(e) for e in self._pending))
            self._pending.clear()

    def flush(self):
        with self._lock:
            if self._closed:
                raise IOError("Writer is closed")
            self._write_pending()
            self._file.flush()

    @staticmethod
    def _flush_periodically(writer_ref, stop, flush_secs):
        while not stop.wait(flush_secs):
            writer = writer_ref()
            if writer is None:
                return
            with writer._lock:
                if writer._closed:
                    return
                writer._write_pending()
                writer._file.flush()
            del writer

    def close(self):
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._write_pending()
            self._file.close()
        self._stop.set()
        _open_writers.discard(self)

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass
