"""Variable-length sequences: padding (pad_sequence) and packing (PackedSequence) for RNNs."""
from collections import namedtuple

from ... import _C

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "unpad_sequence", "pack_sequence", "unpack_sequence"]

_ops = _C._ops


class PackedSequence(namedtuple("PackedSequence_", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])):
    """Sequences of different lengths packed time step by time step: `data` holds, for t = 0, 1,
    ..., the t-th element of every sequence longer than t (batch_sizes[t] of them, longest
    sequences first); sorted_indices / unsorted_indices map between the original batch order and
    the length-sorted one. Made by pack_padded_sequence / pack_sequence."""

    __slots__ = ()

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        return type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def cpu(self, *args, **kwargs):
        return self

    def pin_memory(self):
        return self

    def double(self):
        return self.to(dtype=_C.float64)

    def float(self):
        return self.to(dtype=_C.float32)

    def half(self):
        return self.to(dtype=_C.float16)

    def long(self):
        return self.to(dtype=_C.int64)

    def int(self):
        return self.to(dtype=_C.int32)

    def short(self):
        return self.to(dtype=_C.int16)

    def char(self):
        return self.to(dtype=_C.int8)

    def byte(self):
        return self.to(dtype=_C.uint8)

    @property
    def is_cuda(self):
        return False

    def is_pinned(self):
        return False


def invert_permutation(permutation):
    """The inverse of a permutation given as an index tensor (None stays None)."""
    if permutation is None:
        return None
    perm = permutation.tolist()
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return _ops.tensor(inv, dtype=permutation.dtype, device=permutation.device)


def _lengths_list(lengths):
    if isinstance(lengths, _C.TensorBase):
        return [int(v) for v in lengths.tolist()]
    return [int(v) for v in lengths]


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded batch (T, B, *) (or (B, T, *) with batch_first) of sequences with the given
    lengths. enforce_sorted=True requires lengths in decreasing order; otherwise the batch is
    sorted here and the permutation kept in the PackedSequence."""
    lens = _lengths_list(lengths)
    sorted_indices = None
    if not enforce_sorted:
        order = sorted(range(len(lens)), key=lambda i: -lens[i])
        sorted_indices = _ops.tensor(order, dtype=_C.int64, device=input.device)
        lens = [lens[i] for i in order]
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    else:
        if any(lens[i] < lens[i + 1] for i in range(len(lens) - 1)):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
                               "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to "
                               "sidestep this requirement if you do not need ONNX exportability.")
    if any(n <= 0 for n in lens):
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' that "
                           "is <= 0")
    if batch_first:
        input = input.transpose(0, 1)
    if lens and lens[0] > input.size(0):
        raise RuntimeError(f"Expected sequence length to be larger than or equal to {lens[0]}, but got "
                           f"{input.size(0)}")
    steps = lens[0] if lens else 0
    batch_sizes = [sum(1 for n in lens if n > t) for t in range(steps)]
    data = _ops.cat([input[t, :bs] for t, bs in enumerate(batch_sizes)]) if steps else input[:0].flatten(0, 1)
    return PackedSequence(data, _ops.tensor(batch_sizes, dtype=_C.int64, device="cpu"), sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Inverse of pack_padded_sequence: (padded batch, lengths as an int64 tensor), in the batch
    order the sequences had before packing."""
    batch_sizes = [int(b) for b in sequence.batch_sizes.tolist()]
    max_len = len(batch_sizes)
    if total_length is not None:
        if total_length < max_len:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, but "
                             f"got total_length={total_length} and max sequence length being {max_len}")
        max_len = total_length
    data = sequence.data
    batch = batch_sizes[0] if batch_sizes else 0
    rest = tuple(data.shape[1:])
    steps, offset = [], 0
    for bs in batch_sizes:
        piece = data[offset:offset + bs]
        offset += bs
        if bs < batch:
            piece = _ops.cat([piece, _ops.full((batch - bs,) + rest, padding_value, dtype=data.dtype, device=data.device)])
        steps.append(piece)
    for _ in range(max_len - len(batch_sizes)):
        steps.append(_ops.full((batch,) + rest, padding_value, dtype=data.dtype, device=data.device))
    padded = _ops.stack(steps) if steps else _ops.empty((0, batch) + rest, dtype=data.dtype, device=data.device)
    lengths = [sum(1 for b in batch_sizes if b > i) for i in range(batch)]
    lengths = _ops.tensor(lengths, dtype=_C.int64, device="cpu")
    if batch_first:
        padded = padded.transpose(0, 1)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(0 if batch_first else 1, sequence.unsorted_indices)
        lengths = lengths.index_select(0, sequence.unsorted_indices)
    return padded, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack sequences of shapes (L_i, *) into (L_max, B, *) (or (B, L_max, *)), padding with
    padding_value on the right (or left)."""
    if isinstance(sequences, _C.TensorBase):
        sequences = sequences.unbind(0)
    try:
        sequences = tuple(sequences)
    except TypeError:
        raise RuntimeError("pad_sequence: Expected iterable for input sequences, but got arg of type: "
                           f"{type(sequences)}") from None
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    max_len = max(s.size(0) for s in sequences)
    rows = []
    for s in sequences:
        n = max_len - s.size(0)
        if n:
            pad = _ops.full((n,) + tuple(s.shape[1:]), padding_value, dtype=s.dtype, device=s.device)
            s = _ops.cat([s, pad] if padding_side == "right" else [pad, s])
        rows.append(s)
    return _ops.stack(rows, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The list of unpadded sequences of a padded batch."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:int(n)] for seq, n in zip(padded_sequences, _lengths_list(lengths))]


def pack_sequence(sequences, enforce_sorted=True):
    """Pack a list of sequences (L_i, *) (decreasing lengths unless enforce_sorted=False)."""
    lengths = [s.size(0) for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of sequences a PackedSequence holds."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
