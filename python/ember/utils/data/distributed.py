"""DistributedSampler: each of num_replicas processes visits its own share of a dataset."""
import math
import random

from .sampler import Sampler

__all__ = ["DistributedSampler"]

# torch's CPU randperm switches algorithm (32-bit draws -> 64-bit draws) at this length
_RANDPERM_64BIT_FROM = 0xFFFFFFFF // 20


def _mt19937_words(seed):
    """A random.Random producing the 32-bit words of an MT19937 seeded like torch.Generator.manual_seed.

    Python's Random runs the same MT19937 but seeds it through init_by_array; torch seeds the state
    with the classic single-word recurrence on the seed's low 32 bits, so the state is built here
    and installed with setstate."""
    word = seed & 0xFFFFFFFF
    state = [word]
    for i in range(1, 624):
        word = (1812433253 * (word ^ (word >> 30)) + i) & 0xFFFFFFFF
        state.append(word)
    rng = random.Random()
    rng.setstate((3, tuple(state) + (624,), None))
    return rng


def _torch_randperm(n, seed):
    """The permutation torch.randperm(n, generator=torch.Generator().manual_seed(seed)) gives on the CPU.

    The shards every rank reads must match torch's exactly (a run resumed or compared across the two
    libraries sees the same samples), and ember.randperm draws from Philox, not MT19937, so the
    shuffle is reproduced here: Fisher-Yates over 32-bit draws, or torch's inside-out variant over
    64-bit draws (high word first) for very long permutations."""
    if not isinstance(seed, int):
        raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
    if not -2**63 <= seed < 2**64:
        raise ValueError(f"seed {seed} does not fit a 64-bit generator seed")
    draw = _mt19937_words(seed).getrandbits
    if n < _RANDPERM_64BIT_FROM:
        perm = list(range(n))
        for i in range(n - 1):
            j = i + draw(32) % (n - i)
            perm[i], perm[j] = perm[j], perm[i]
        return perm
    perm = [0] * n
    for i in range(n):
        j = ((draw(32) << 32) | draw(32)) % (i + 1)
        perm[i] = perm[j]
        perm[j] = i
    return perm


class DistributedSampler(Sampler):
    """Shards a dataset across num_replicas processes: rank r takes every num_replicas-th index
    starting at r, after an optional shuffle that depends on seed + epoch (call set_epoch each epoch).
    Unless drop_last, the index list is padded by repeating its start so every rank gets as many."""

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        if num_replicas is None or rank is None:
            # imported here: ember.distributed is only needed when the group is the source of truth
            from ... import distributed as dist
            if not dist.is_available():
                raise RuntimeError("Requires distributed package to be available")
            if num_replicas is None:
                num_replicas = dist.get_world_size()
            if rank is None:
                rank = dist.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            # drop the tail so every rank gets the same count without repeating samples
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        n = len(self.dataset)
        indices = _torch_randperm(n, self.seed + self.epoch) if self.shuffle else list(range(n))
        if self.drop_last:
            indices = indices[:self.total_size]
        else:
            padding = self.total_size - len(indices)
            if padding > 0:
                # repeat the whole list as often as needed (only when the dataset is smaller than the pad)
                indices += (indices * math.ceil(padding / len(indices)))[:padding]
        shard = indices[self.rank:self.total_size:self.num_replicas]
        assert len(shard) == self.num_samples
        return iter(shard)

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Makes the next shuffle depend on epoch, so every epoch sees a different order (the same on all ranks)."""
        self.epoch = epoch
