"""AdaptiveLogSoftmaxWithLoss: efficient softmax over many classes (Grave et al., 2016). Frequent
classes (below cutoffs[0]) sit in the head with one extra logit per tail cluster; rarer classes
live in tail clusters of reduced hidden size (in_features / div_value^(i+1))."""
from collections import namedtuple

from ... import _C
from ...autograd.grad_mode import no_grad
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module
from .utils import F

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Softmax over many classes in frequency clusters (cheap head, smaller tails).

    forward(input, target) -> (output, loss): output[i] is the log-probability of target[i], loss
    the mean negative log-likelihood. log_prob(input) gives every class's log-probability;
    predict(input) the most likely class."""

    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False, device=None, dtype=None):
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > (n_classes - 1)
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted in an increasing "
                             "order, where each value is between 1 and n_classes-1")
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(self.in_features, self.head_size, bias=self.head_bias, device=device, dtype=dtype)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hsz = int(self.in_features // (self.div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(self.in_features, hsz, bias=False, device=device, dtype=dtype),
                                        Linear(hsz, osz, bias=False, device=device, dtype=dtype)))

    def reset_parameters(self):
        self.head.reset_parameters()
        for i2h, h2o in self.tail:
            i2h.reset_parameters()
            h2o.reset_parameters()

    def forward(self, input_, target_):
        targ_dim = target_.dim()
        if targ_dim == 1:
            if input_.size(0) != target_.size(0):
                raise RuntimeError("Input and target should have the same size in the batch dimension.")
            if input_.dim() != 2:
                raise RuntimeError("1D target tensor expects 2D input tensors, but found inputs with size",
                                   input_.size())
        elif targ_dim == 0:
            if input_.dim() != 1:
                raise RuntimeError("0D target tensor expects 1D input tensors, but found inputs with size",
                                   input_.size())
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        is_batched = targ_dim > 0
        input = input_ if is_batched else input_.unsqueeze(0)
        target = target_ if is_batched else target_.unsqueeze(0)
        batch_size = target.size(0)
        if batch_size and (int(target.min()) < 0 or int(target.max()) >= self.n_classes):
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                               f"[{int(target.min())}, {int(target.max())}] were found. ")
        output = _C._ops.zeros(batch_size, dtype=input.dtype, device=input.device)
        # the head column each row reads: its own class in the shortlist, else its cluster's logit
        gather_inds = target
        for i in range(1, self.n_clusters + 1):
            low, high = self.cutoffs[i - 1], self.cutoffs[i]
            rows = ((target >= low) & (target < high)).nonzero().reshape(-1)
            if rows.numel() == 0:
                continue
            relative_target = target.index_select(0, rows) - low
            cluster_logprob = F.log_softmax(self.tail[i - 1](input.index_select(0, rows)), dim=1)
            local_logprob = cluster_logprob.gather(1, relative_target.unsqueeze(1)).squeeze(1)
            output = output.index_add(0, rows, local_logprob)
            gather_inds = gather_inds.index_fill(0, rows, self.shortlist_size + i - 1)
        head_logprob = F.log_softmax(self.head(input), dim=1)
        output = output + head_logprob.gather(1, gather_inds.unsqueeze(1)).squeeze(1)
        loss = (-output).mean()
        if not is_batched:
            output = output.squeeze(0)
        return _ASMoutput(output, loss)

    def _get_full_log_prob(self, input, head_output):
        head_logprob = F.log_softmax(head_output, dim=1)
        parts = [head_logprob[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster_logprob = F.log_softmax(self.tail[i](input), dim=1)
            parts.append(cluster_logprob + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return _C._ops.cat(parts, 1)

    def log_prob(self, input_):
        """(N, n_classes) (or (n_classes,)) log-probabilities of every class."""
        is_batched = input_.dim() > 1
        input = input_ if is_batched else input_.unsqueeze(0)
        out = self._get_full_log_prob(input, self.head(input))
        return out if is_batched else out.squeeze(0)

    def predict(self, input_):
        """The most likely class of each row; the tails are evaluated only for rows whose head argmax
        is a cluster."""
        is_batched = input_.dim() > 1
        input = input_ if is_batched else input_.unsqueeze(0)
        with no_grad():
            head_output = self.head(input)
            output = head_output.argmax(1)
            not_in_shortlist = output >= self.shortlist_size
            if bool(not_in_shortlist.any()):
                rows = not_in_shortlist.nonzero().reshape(-1)
                log_prob = self._get_full_log_prob(input.index_select(0, rows), head_output.index_select(0, rows))
                output = output.index_copy(0, rows, log_prob.argmax(1))
        return output if is_batched else output.squeeze(0)
