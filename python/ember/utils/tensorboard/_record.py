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

import numpy as np

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


def _crc_bytes(data, state):
    """Runs the CRC register (no pre/post inversion) over `data` from `state`."""
    table = _CRC_TABLE
    for byte in data:
        state = table[(state ^ byte) & 0xFF] ^ (state >> 8)
    return state


# Large inputs (images, graphs) are split into _LANES equal chunks whose registers numpy advances
# side by side; the register is linear over GF(2), so the chunks' results then chain through
# "advance over _CHUNK zero bytes", a linear map applied with four 256-entry tables.
_CHUNK, _LANES = 256, 1024
_VECTOR_MIN = _CHUNK * _LANES
_np_table = None
_zero_shift = None


def _shift_tables():
    columns = [_crc_bytes(bytes(_CHUNK), 1 << bit) for bit in range(32)]
    tables = []
    for k in range(4):
        table = [0] * 256
        for value in range(1, 256):
            low = value & -value
            table[value] = table[value ^ low] ^ columns[8 * k + low.bit_length() - 1]
        tables.append(table)
    return tables


def _crc_vectorized(data, state):
    global _np_table, _zero_shift
    if _np_table is None:
        _np_table = np.array(_CRC_TABLE, dtype=np.uint32)
        _zero_shift = _shift_tables()
    blocks = len(data) // _VECTOR_MIN
    head = memoryview(data)[:blocks * _VECTOR_MIN]
    t0, t1, t2, t3 = _zero_shift
    for b in range(blocks):
        chunk = np.frombuffer(head[b * _VECTOR_MIN:(b + 1) * _VECTOR_MIN], np.uint8)
        lanes = chunk.reshape(_LANES, _CHUNK).T.astype(np.uint32)
        registers = np.zeros(_LANES, np.uint32)
        for column in lanes:
            registers = _np_table[(registers ^ column) & 0xFF] ^ (registers >> 8)
        for partial in registers.tolist():
            state = (t0[state & 0xFF] ^ t1[(state >> 8) & 0xFF] ^ t2[(state >> 16) & 0xFF]
                     ^ t3[state >> 24] ^ partial)
    return _crc_bytes(bytes(memoryview(data)[blocks * _VECTOR_MIN:]), state)


def crc32c(data, crc=0):
    """CRC-32C of `data` (bytes-like), continuing from `crc`."""
    data = bytes(data)
    state = crc ^ 0xFFFFFFFF
    if len(data) >= _VECTOR_MIN:
        state = _crc_vectorized(data, state)
    else:
        state = _crc_bytes(data, state)
    return state ^ 0xFFFFFFFF


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
        """Writes `data` as one record."""
        self._writer.write(encode_record(data))

    def flush(self):
        """Flushes the underlying file."""
        self._writer.flush()

    def close(self):
        """Closes the underlying file."""
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
