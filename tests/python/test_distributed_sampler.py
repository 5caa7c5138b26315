"""ember.utils.data.DistributedSampler against torch's: the same shards, padding, lengths and errors."""
import itertools

import pytest

import ember
import ember.distributed as dist
import ember.utils.data.distributed as ember_distributed
from ember.utils.data import DataLoader, DistributedSampler


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


class Sized:
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return i


def _shards(sampler_cls, n, replicas, **kwargs):
    return [list(sampler_cls(Sized(n), num_replicas=replicas, rank=r, **kwargs)) for r in range(replicas)]


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 7, 10, 16, 33, 100])
@pytest.mark.parametrize("replicas", [1, 2, 3, 4, 8])
def test_shards_match_torch(torch, n, replicas):
    from torch.utils.data.distributed import DistributedSampler as TorchSampler
    for shuffle, drop_last, seed, epoch in itertools.product([False, True], [False, True], [0, 3, 2**33 + 1],
                                                             [0, 1, 5]):
        kw = dict(shuffle=shuffle, drop_last=drop_last, seed=seed)
        ours = [DistributedSampler(Sized(n), num_replicas=replicas, rank=r, **kw) for r in range(replicas)]
        theirs = [TorchSampler(Sized(n), num_replicas=replicas, rank=r, **kw) for r in range(replicas)]
        for o, t in zip(ours, theirs):
            o.set_epoch(epoch)
            t.set_epoch(epoch)
            assert list(o) == list(t), (n, replicas, kw, epoch)
            assert len(o) == len(t) and o.num_samples == t.num_samples and o.total_size == t.total_size


def test_large_dataset_matches_torch(torch):
    from torch.utils.data.distributed import DistributedSampler as TorchSampler
    for seed, epoch in [(0, 0), (12345, 7), (-5, 2)]:
        o = DistributedSampler(Sized(50_001), num_replicas=6, rank=5, seed=seed)
        t = TorchSampler(Sized(50_001), num_replicas=6, rank=5, seed=seed)
        o.set_epoch(epoch)
        t.set_epoch(epoch)
        assert list(o) == list(t)


def test_randperm_matches_torch_generator(torch):
    for seed, n in itertools.product([0, 1, 2**32 + 7, 2**64 - 1, -1, -2**63], [0, 1, 2, 9, 1000]):
        g = torch.Generator()
        g.manual_seed(seed)
        assert ember_distributed._torch_randperm(n, seed) == torch.randperm(n, generator=g).tolist()


def test_randperm_bad_seed(torch):
    with pytest.raises(ValueError):
        torch.Generator().manual_seed(2**64)
    with pytest.raises(ValueError):
        ember_distributed._torch_randperm(5, 2**64)
    with pytest.raises(RuntimeError):
        ember_distributed._torch_randperm(5, 1.5)


def test_long_permutation_variant_is_a_permutation(monkeypatch):
    # torch switches to 64-bit draws above ~214M elements; exercise that branch on a small n
    monkeypatch.setattr(ember_distributed, "_RANDPERM_64BIT_FROM", 10)
    for n in [10, 11, 500]:
        perm = ember_distributed._torch_randperm(n, 4)
        assert sorted(perm) == list(range(n))
        assert perm != list(range(n))
        assert perm == ember_distributed._torch_randperm(n, 4)
        assert perm != ember_distributed._torch_randperm(n, 5)


def test_shards_partition_and_pad():
    # without drop_last: every index appears, the pad repeats the start; with it: disjoint, none repeated
    shards = _shards(DistributedSampler, 10, 4, shuffle=True, seed=1)
    flat = sorted(itertools.chain(*shards))
    assert [len(s) for s in shards] == [3, 3, 3, 3] and set(flat) == set(range(10)) and len(flat) == 12
    shards = _shards(DistributedSampler, 10, 4, shuffle=True, seed=1, drop_last=True)
    flat = sorted(itertools.chain(*shards))
    assert [len(s) for s in shards] == [2, 2, 2, 2] and len(set(flat)) == 8
    # smaller than the number of replicas: the list is repeated whole
    assert _shards(DistributedSampler, 2, 5, shuffle=False) == [[0], [1], [0], [1], [0]]
    assert _shards(DistributedSampler, 2, 5, shuffle=False, drop_last=True) == [[]] * 5
    assert _shards(DistributedSampler, 0, 3) == [[], [], []]


def test_epochs_reshuffle_consistently():
    a = DistributedSampler(Sized(20), num_replicas=2, rank=0)
    first = list(a)
    assert list(a) == first  # same epoch, same order
    a.set_epoch(1)
    assert list(a) != first
    b = DistributedSampler(Sized(20), num_replicas=2, rank=1)
    b.set_epoch(1)
    assert sorted(list(a) + list(b)) == list(range(20))


@pytest.mark.parametrize("rank", [-1, 4, 10])
def test_bad_rank(torch, rank):
    from torch.utils.data.distributed import DistributedSampler as TorchSampler
    with pytest.raises(ValueError) as theirs:
        TorchSampler(Sized(5), num_replicas=4, rank=rank)
    with pytest.raises(ValueError) as ours:
        DistributedSampler(Sized(5), num_replicas=4, rank=rank)
    assert str(ours.value) == str(theirs.value)


def test_reads_world_from_process_group(monkeypatch):
    monkeypatch.setattr(dist, "is_available", lambda: True, raising=False)
    monkeypatch.setattr(dist, "get_world_size", lambda: 3, raising=False)
    monkeypatch.setattr(dist, "get_rank", lambda: 2, raising=False)
    s = DistributedSampler(Sized(9), shuffle=False)
    assert (s.num_replicas, s.rank, list(s)) == (3, 2, [2, 5, 8])
    s = DistributedSampler(Sized(9), rank=0, shuffle=False)
    assert (s.num_replicas, list(s)) == (3, [0, 3, 6])
    monkeypatch.setattr(dist, "is_available", lambda: False, raising=False)
    with pytest.raises(RuntimeError, match="distributed package"):
        DistributedSampler(Sized(9))


def test_exports_and_dataloader(torch):
    assert ember.utils.data.DistributedSampler is ember.utils.data.distributed.DistributedSampler
    assert issubclass(DistributedSampler, ember.utils.data.Sampler)
    sampler = DistributedSampler(Sized(10), num_replicas=2, rank=1, seed=7)
    batches = [b.tolist() for b in DataLoader(Sized(10), batch_size=2, sampler=sampler)]
    ref = torch.utils.data.DistributedSampler(Sized(10), num_replicas=2, rank=1, seed=7)
    assert list(itertools.chain(*batches)) == list(ref)
