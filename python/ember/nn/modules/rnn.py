"""Recurrent layers: RNN, LSTM, GRU (multi-layer, bidirectional, packed sequences) and their cells.

Each layer projects the whole input sequence with one matmul (x W_ih^T + b); the time loop then
only does h W_hh^T plus the gate math of one step. For LSTM without packing or projections that loop
(and its backward) is one op per layer direction, _lstm_seq, written in C++.
"""
import math
import numbers
import warnings

from ... import _C
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module
from .utils import F

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_ops = _C._ops
_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _lstm_step(gates, c):
    """One LSTM step from the pre-activations (B, 4H) in torch's i, f, g, o order: (h, c).
    The pointwise math (and its backward) is one fused op; complex numbers take the ops one by one."""
    if gates.is_complex():
        i, f, g, o = gates.chunk(4, 1)
        c = _ops.sigmoid(f) * c + _ops.sigmoid(i) * _ops.tanh(g)
        return _ops.sigmoid(o) * _ops.tanh(c), c
    return _ops._lstm_cell(gates, c)


def _gru_step(gi, gh, h):
    """One GRU step: gi = x W_ih^T + b_ih, gh = h W_hh^T + b_hh, gates r, z, n (one fused op; complex
    numbers take the ops one by one)."""
    if gi.is_complex():
        ir, iz, in_ = gi.chunk(3, 1)
        hr, hz, hn = gh.chunk(3, 1)
        r, z = _ops.sigmoid(ir + hr), _ops.sigmoid(iz + hz)
        n = _ops.tanh(in_ + r * hn)
        return n + z * (h - n)
    return _ops._gru_cell(gi, gh, h)


def _mm_bias(h, w_t, bias):
    return _ops.mm(h, w_t) if bias is None else _ops.addmm(bias, h, w_t)


def _run_direction(mode, steps, sizes, h, c, w_hh, b_hh, w_hr, reverse):
    """The recurrence of one layer and direction over the projected inputs `steps` (one
    (sizes[t], G) tensor per step; sizes shrink for packed input). Returns (outputs in time order,
    final h, final c): sequences that end early keep the h they had at their last step."""
    w_hh_t = w_hh.t()
    w_hr_t = w_hr.t() if w_hr is not None else None
    packed = sizes[0] != sizes[-1]
    h0, c0 = h, c
    order = range(len(steps) - 1, -1, -1) if reverse else range(len(steps))
    outs, done_h, done_c = [], [], []
    if packed:
        # forward: start with the longest sequences' batch, drop finished rows as sizes shrink;
        # reverse: start at the last step with only the sequences that reach it, add rows later
        first = sizes[order[0]]
        h = h[:first]
        c = c[:first] if c is not None else None
    for t in order:
        bs = sizes[t]
        if packed and bs != h.size(0):
            if bs < h.size(0):
                done_h.append(h[bs:])
                h = h[:bs]
                if c is not None:
                    done_c.append(c[bs:])
                    c = c[:bs]
            else:
                h = _ops.cat([h, h0[h.size(0):bs]])
                if c is not None:
                    c = _ops.cat([c, c0[c.size(0):bs]])
        x = steps[t]
        if mode == "LSTM":
            h, c = _lstm_step(_ops.addmm(x, h, w_hh_t), c)
            if w_hr_t is not None:
                h = _ops.mm(h, w_hr_t)
        elif mode == "GRU":
            h = _gru_step(x, _mm_bias(h, w_hh_t, b_hh), h)
        elif mode == "RNN_TANH":
            h = _ops.addmm(x, h, w_hh_t).tanh()
        else:
            h = _ops.addmm(x, h, w_hh_t).relu()
        outs.append(h)
    if reverse:
        outs.reverse()
    if done_h:
        h = _ops.cat([h] + done_h[::-1])
        if c is not None:
            c = _ops.cat([c] + done_c[::-1])
    return outs, h, c


class RNNBase(Module):
    """The common part of RNN, LSTM and GRU: parameters named as torch's (weight_ih_l{k}[_reverse],
    weight_hh_l{k}, bias_ih_l{k}, bias_hh_l{k}, weight_hr_l{k}), shape checks and the layer loop."""

    __constants__ = ["mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first", "dropout",
                     "bidirectional", "proj_size"]

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        if (not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) or not 0 <= dropout <= 1):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}",
                          stacklevel=2)
        if not isinstance(hidden_size, int) or isinstance(hidden_size, bool):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_in = input_size if layer == 0 else real_hidden * num_directions
                shapes = [("weight_ih", (gate_size, layer_in)), ("weight_hh", (gate_size, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                suffix = "_reverse" if direction == 1 else ""
                names = []
                for base, shape in shapes:
                    name = f"{base}_l{layer}{suffix}"
                    setattr(self, name, Parameter(_ops.empty(shape, dtype=dtype, device=device)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def flatten_parameters(self):
        """No-op: the weights are always used as they are (kept for torch compatibility)."""

    @property
    def _flat_weights(self):
        return [getattr(self, n) for n in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # ---- argument checks (torch's messages)

    def _num_dirs(self):
        return 2 if self.bidirectional else 1

    def check_input(self, input, batch_sizes):
        w = getattr(self, self._flat_weights_names[0])
        if input.is_floating_point() and input.dtype != w.dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype ({w.dtype}). Convert "
                             f"input: input.to({w.dtype}), or convert model: model.to({input.dtype})")
        expected = 2 if batch_sizes is not None else 3
        if input.dim() != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {input.size(-1)}")

    def get_expected_hidden_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * self._num_dirs(), mini_batch, real_hidden)

    def check_hidden_size(self, hx, expected_hidden_size, msg="Expected hidden size {}, got {}"):
        if tuple(hx.shape) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.shape)))

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return hx.index_select(1, permutation)

    # ---- the computation

    def _prepare(self, input, hx):
        """(x, batch_sizes, sorted/unsorted indices, unbatched, hx as a tuple of 3-D tensors or None)."""
        name = type(self).__name__
        if isinstance(input, PackedSequence):
            x, batch_sizes, sorted_indices, unsorted_indices = input
            batch_sizes = [int(b) for b in batch_sizes.tolist()]
            unbatched = False
        else:
            x, batch_sizes, sorted_indices, unsorted_indices = input, None, None, None
            if x.dim() not in (2, 3):
                tail = " tensor instead" if self.mode in ("RNN_TANH", "RNN_RELU") else " instead"
                raise ValueError(f"{name}: Expected input to be 2D or 3D, got {x.dim()}D{tail}")
            unbatched = x.dim() == 2
        states = None
        if hx is not None:
            states = tuple(hx) if self.mode == "LSTM" else (hx,)
            dims = [s.dim() for s in states]
            if not isinstance(input, PackedSequence):
                want = 2 if unbatched else 3
                kind = "unbatched 2-D" if unbatched else "batched 3-D"
                if any(d != want for d in dims):
                    if self.mode == "LSTM":
                        raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D but got "
                                           f"({dims[0]}-D, {dims[1]}-D) tensors")
                    raise RuntimeError(f"For {kind} input, hx should also be {want}-D but got {dims[0]}-D tensor")
            if unbatched:
                states = tuple(s.unsqueeze(1) for s in states)
            states = tuple(self.permute_hidden(s, sorted_indices) for s in states)
        if unbatched:
            x = x.unsqueeze(0 if self.batch_first else 1)
        return x, batch_sizes, sorted_indices, unsorted_indices, unbatched, states

    def _check_states(self, x, batch_sizes, states):
        self.check_input(x, batch_sizes)
        expected = self.get_expected_hidden_size(x, batch_sizes)
        if self.mode == "LSTM":
            self.check_hidden_size(states[0], expected, "Expected hidden[0] size {}, got {}")
            self.check_hidden_size(states[1], self.get_expected_cell_size(x, batch_sizes),
                                   "Expected hidden[1] size {}, got {}")
        else:
            self.check_hidden_size(states[0], expected)

    def _run(self, input, hx):
        x, batch_sizes, sorted_indices, unsorted_indices, unbatched, states = self._prepare(input, hx)
        packed = batch_sizes is not None
        dirs = self._num_dirs()
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        batch = batch_sizes[0] if packed else x.size(0 if self.batch_first else 1)
        if states is None:
            self.check_input(x, batch_sizes)
            states = (_ops.zeros((self.num_layers * dirs, batch, real_hidden), dtype=x.dtype, device=x.device),)
            if self.mode == "LSTM":
                states += (_ops.zeros((self.num_layers * dirs, batch, self.hidden_size), dtype=x.dtype,
                                      device=x.device),)
        else:
            self._check_states(x, batch_sizes, states)
        if not packed and self.batch_first:
            x = x.transpose(0, 1)
        if not packed and x.size(1 if self.batch_first else 0) == 0:
            raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
        sizes = batch_sizes if packed else [batch] * x.size(0)
        hs, cs = [], []
        weights = self.all_weights
        for layer in range(self.num_layers):
            if layer > 0 and self.dropout > 0 and self.training:
                x = F.dropout(x, self.dropout, True)
            layer_outs = []
            for d in range(dirs):
                w = weights[layer * dirs + d]
                w_ih, w_hh = w[0], w[1]
                b_ih, b_hh = (w[2], w[3]) if self.bias else (None, None)
                w_hr = w[-1] if self.proj_size > 0 else None
                # LSTM / RNN add b_hh once to the projection; GRU needs it inside r * (W_hn h + b_hn)
                b_in = b_ih + b_hh if b_ih is not None and self.mode != "GRU" else b_ih
                xw = F.linear(x, w_ih, b_in)
                k = layer * dirs + d
                c0 = states[1][k] if self.mode == "LSTM" else None
                if self.mode == "LSTM" and not packed and w_hr is None and not xw.is_complex():
                    # the whole recurrence of this direction in one op (forward and backward loops in C++)
                    hs_, cs_, _ = _ops._lstm_seq(xw, states[0][k], c0, w_hh, d == 1)
                    last = 0 if d == 1 else -1
                    layer_outs.append(hs_)
                    hs.append(hs_[last])
                    cs.append(cs_[last])
                    continue
                steps = xw.split(sizes, 0) if packed else xw.unbind(0)
                outs, h, c = _run_direction(self.mode, steps, sizes, states[0][k], c0, w_hh,
                                            b_hh if self.mode == "GRU" else None, w_hr, reverse=d == 1)
                layer_outs.append(_ops.cat(outs) if packed else _ops.stack(outs))
                hs.append(h)
                cs.append(c)
            x = layer_outs[0] if dirs == 1 else _ops.cat(layer_outs, -1)
        h_n = _ops.stack(hs)
        hidden = (h_n, _ops.stack(cs)) if self.mode == "LSTM" else (h_n,)
        hidden = tuple(self.permute_hidden(s, unsorted_indices) for s in hidden)
        if packed:
            output = PackedSequence(x, input.batch_sizes, sorted_indices, unsorted_indices)
        else:
            output = x.transpose(0, 1) if self.batch_first else x
            if unbatched:
                output = output.squeeze(0 if self.batch_first else 1)
                hidden = tuple(s.squeeze(1) for s in hidden)
        return output, (hidden if self.mode == "LSTM" else hidden[0])

    def forward(self, input, hx=None):
        return self._run(input, hx)


class RNN(RNNBase):
    """Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (or relu)."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, *args, **kwargs)


class LSTM(RNNBase):
    """Long short-term memory, gates i, f, g, o; proj_size > 0 projects h with weight_hr."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes):
        mini_batch = int(batch_sizes[0]) if batch_sizes is not None else (
            input.size(0) if self.batch_first else input.size(1))
        return (self.num_layers * self._num_dirs(), mini_batch, self.hidden_size)


class GRU(RNNBase):
    """Gated recurrent unit, gates r, z, n with n = tanh(W_in x + b_in + r * (W_hn h + b_hn))."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


# ---------------------------------------------------------------- cells


class RNNCellBase(Module):
    """weight_ih (G*H, in), weight_hh (G*H, H), bias_ih, bias_hh, all ~ U(-1/sqrt(H), 1/sqrt(H))."""

    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(_ops.empty((num_chunks * hidden_size, input_size), dtype=dtype, device=device))
        self.weight_hh = Parameter(_ops.empty((num_chunks * hidden_size, hidden_size), dtype=dtype, device=device))
        if bias:
            self.bias_ih = Parameter(_ops.empty(num_chunks * hidden_size, dtype=dtype, device=device))
            self.bias_hh = Parameter(_ops.empty(num_chunks * hidden_size, dtype=dtype, device=device))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _check(self, input, states):
        """Shape checks; returns (input as 2-D, states as 2-D or None, whether input was 1-D)."""
        name = type(self).__name__
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        for s in states or ():
            if s is not None and s.dim() not in (1, 2):
                raise ValueError(f"{name}: Expected hidden to be 1D or 2D, got {s.dim()}D instead")
        unbatched = input.dim() == 1
        if unbatched:
            input = input.unsqueeze(0)
        if input.size(1) != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} expected {self.input_size}")
        if states is None:
            z = _ops.zeros((input.size(0), self.hidden_size), dtype=input.dtype, device=input.device)
            return input, (z,) * (2 if isinstance(self, LSTMCell) else 1), unbatched
        if unbatched:
            states = tuple(s.unsqueeze(0) for s in states)
        for i, s in enumerate(states):
            if s.size(0) != input.size(0):
                raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{i} batch size "
                                   f"{s.size(0)}")
            if s.size(1) != self.hidden_size:
                raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got {s.size(1)}, expected "
                                   f"{self.hidden_size}")
        return input, states, unbatched


class RNNCell(RNNCellBase):
    """h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (or relu)."""

    __constants__ = ["input_size", "hidden_size", "bias", "nonlinearity"]

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        x, (h,), unbatched = self._check(input, None if hx is None else (hx,))
        pre = F.linear(x, self.weight_ih, self.bias_ih) + F.linear(h, self.weight_hh, self.bias_hh)
        if self.nonlinearity == "tanh":
            h = pre.tanh()
        elif self.nonlinearity == "relu":
            h = pre.relu()
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        return h.squeeze(0) if unbatched else h


class LSTMCell(RNNCellBase):
    """One LSTM step; forward(input, (h, c)) -> (h', c')."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        x, (h, c), unbatched = self._check(input, None if hx is None else tuple(hx))
        gates = F.linear(x, self.weight_ih, self.bias_ih) + F.linear(h, self.weight_hh, self.bias_hh)
        h, c = _lstm_step(gates, c)
        return (h.squeeze(0), c.squeeze(0)) if unbatched else (h, c)


class GRUCell(RNNCellBase):
    """One GRU step; forward(input, h) -> h'."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        x, (h,), unbatched = self._check(input, None if hx is None else (hx,))
        h = _gru_step(F.linear(x, self.weight_ih, self.bias_ih), F.linear(h, self.weight_hh, self.bias_hh), h)
        return h.squeeze(0) if unbatched else h
