"""ember.utils.data: datasets, samplers, random_split, collation and the DataLoader."""
import collections
import math

import numpy as np
import pytest

import ember
from ember.utils.data import (BatchSampler, ChainDataset, ConcatDataset, DataLoader, Dataset, IterableDataset,
                              RandomSampler, SequentialSampler, StackDataset, Subset, SubsetRandomSampler,
                              TensorDataset, WeightedRandomSampler, default_collate, default_convert,
                              get_worker_info, random_split)


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


class Squares(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i >= self.n:
            raise IndexError(i)
        return i * i


class Stream(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n


# ---------------------------------------------------------------- datasets
def test_tensor_dataset_and_subset():
    x, y = ember.arange(10.0).reshape(5, 2), ember.arange(5)
    ds = TensorDataset(x, y)
    assert len(ds) == 5 and ds[2][0].tolist() == [4.0, 5.0] and ds[2][1].item() == 2
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(x, ember.arange(4))
    sub = Subset(ds, [4, 0])
    assert len(sub) == 2 and sub[0][1].item() == 4 and [s[1].item() for s in sub.__getitems__([1, 0])] == [0, 4]
    with pytest.raises(NotImplementedError, match="Subclasses of Dataset should implement __getitem__"):
        Dataset()[0]


def test_concat_chain_stack():
    c = Squares(3) + Squares(2)
    assert isinstance(c, ConcatDataset) and len(c) == 5 and c.cumulative_sizes == [3, 5]
    assert [c[i] for i in range(5)] == [0, 1, 4, 0, 1] and c[-1] == 1
    with pytest.raises(ValueError, match="absolute value of index should not exceed dataset length"):
        c[-6]
    with pytest.raises(AssertionError, match="datasets should not be an empty iterable"):
        ConcatDataset([])
    with pytest.raises(AssertionError, match="ConcatDataset does not support IterableDataset"):
        ConcatDataset([Stream(2)])
    ch = Stream(2) + Stream(3)
    assert isinstance(ch, ChainDataset) and list(ch) == [0, 1, 0, 1, 2] and len(ch) == 5
    st = StackDataset(Squares(3), Squares(3))
    assert st[2] == (4, 4) and len(st) == 3
    assert StackDataset(a=Squares(2), b=Squares(2))[1] == {"a": 1, "b": 1}
    with pytest.raises(ValueError, match="Size mismatch between datasets"):
        StackDataset(Squares(2), Squares(3))


def test_random_split():
    g = ember.Generator().manual_seed(0)
    parts = random_split(range(10), [3, 7], generator=g)
    assert [len(p) for p in parts] == [3, 7]
    assert sorted(list(parts[0]) + list(parts[1])) == list(range(10))
    again = random_split(range(10), [3, 7], generator=ember.Generator().manual_seed(0))
    assert list(again[0]) == list(parts[0])
    assert [len(p) for p in random_split(range(10), [0.33, 0.67])] == [4, 6]  # remainder round-robin
    assert [len(p) for p in random_split(range(11), [0.5, 0.25, 0.25])] == [6, 3, 2]
    with pytest.raises(ValueError, match="Sum of input lengths does not equal the length of the input dataset"):
        random_split(range(10), [3, 3])
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        random_split(range(3), [1.0, 0.0])
    ember.manual_seed(3)
    a = list(random_split(range(8), [4, 4])[0])
    ember.manual_seed(3)
    assert list(random_split(range(8), [4, 4])[0]) == a


# ---------------------------------------------------------------- samplers
def test_samplers():
    assert list(SequentialSampler(range(4))) == [0, 1, 2, 3]
    g = ember.Generator().manual_seed(1)
    rs = RandomSampler(range(10), generator=g)
    p1, p2 = list(rs), list(rs)
    assert sorted(p1) == list(range(10)) and sorted(p2) == list(range(10)) and p1 != p2 and len(rs) == 10
    rep = list(RandomSampler(range(3), replacement=True, num_samples=70, generator=g))
    assert len(rep) == 70 and set(rep) <= {0, 1, 2}
    more = list(RandomSampler(range(4), num_samples=10, generator=g))
    assert len(more) == 10 and sorted(more[:4]) == [0, 1, 2, 3] and sorted(more[4:8]) == [0, 1, 2, 3]
    ember.manual_seed(5)
    a = list(RandomSampler(range(20)))
    ember.manual_seed(5)
    assert list(RandomSampler(range(20))) == a  # seeded from the global RNG
    with pytest.raises(TypeError, match="replacement should be a boolean value"):
        RandomSampler(range(3), replacement=1)
    with pytest.raises(ValueError, match="num_samples should be a positive integer value"):
        RandomSampler(range(3), num_samples=0)
    idx = [10, 20, 30]
    assert sorted(SubsetRandomSampler(idx, generator=g)) == idx and len(SubsetRandomSampler(idx)) == 3
    w = list(WeightedRandomSampler([0.0, 0.0, 1.0, 0.0], 20, generator=g))
    assert w == [2] * 20
    nr = list(WeightedRandomSampler([1, 1, 1, 1], 4, replacement=False, generator=g))
    assert sorted(nr) == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="weights should be a 1d sequence but given weights have shape"):
        WeightedRandomSampler([[1.0, 2.0]], 2)
    with pytest.raises(ValueError, match="num_samples should be a positive integer value"):
        WeightedRandomSampler([1.0], 0)
    b = BatchSampler(SequentialSampler(range(10)), 3, drop_last=False)
    assert list(b) == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]] and len(b) == 4
    b2 = BatchSampler(range(10), 3, drop_last=True)
    assert len(list(b2)) == 3 and len(b2) == 3
    with pytest.raises(ValueError, match="batch_size should be a positive integer value, but got batch_size=0"):
        BatchSampler(range(3), 0, False)
    with pytest.raises(ValueError, match="drop_last should be a boolean value, but got drop_last=1"):
        BatchSampler(range(3), 1, 1)


# ---------------------------------------------------------------- collation
Point = collections.namedtuple("Point", ["x", "y"])


def _structure(v, lib):
    """A comparable description of a collated batch (types, dtypes, values)."""
    if isinstance(v, (lib.Tensor,)):
        return ("T", str(v.dtype).split(".")[-1], tuple(v.shape), v.tolist())
    if isinstance(v, dict):
        return ("D", type(v).__name__, {k: _structure(x, lib) for k, x in v.items()})
    if isinstance(v, tuple) and hasattr(v, "_fields"):
        return ("NT", type(v).__name__, [_structure(x, lib) for x in v])
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, [_structure(x, lib) for x in v])
    return ("V", v)


def _batches(lib):
    t = lib.tensor
    return [
        [t([1.0, 2.0]), t([3.0, 4.0])],
        [1, 2, 3],
        [True, False],
        [1.5, 2.5],
        ["a", "b"],
        [b"x", b"y"],
        [np.float32(1.0), np.float32(2.0)],
        [np.int32(3), np.int32(4)],
        [np.array([1, 2], dtype=np.int16), np.array([3, 4], dtype=np.int16)],
        [(1, t([1.0])), (2, t([2.0]))],
        [[1, 2.0], [3, 4.0]],
        [{"a": 1, "b": np.ones((2, 2))}, {"a": 2, "b": np.zeros((2, 2))}],
        [Point(1, t(2.0)), Point(3, t(4.0))],
        [{"nest": [Point(np.float64(1.0), "s")]}, {"nest": [Point(np.float64(2.0), "t")]}],
        [collections.OrderedDict(z=1, a=2), collections.OrderedDict(z=3, a=4)],
    ]


def test_default_collate_matches_torch(torch):
    from torch.utils.data import default_collate as tcollate, default_convert as tconvert
    for eb, tb in zip(_batches(ember), _batches(torch)):
        assert _structure(default_collate(eb), ember) == _structure(tcollate(tb), torch), eb
        assert _structure(default_convert(eb), ember) == _structure(tconvert(tb), torch), eb


def test_default_collate_errors():
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
        default_collate([[1, 2], [3]])
    with pytest.raises(TypeError, match="default_collate: batch must contain tensors, numpy arrays, numbers, dicts "
                                        "or lists; found <class 'object'>"):
        default_collate([object(), object()])
    with pytest.raises(TypeError, match="found <U1"):
        default_collate([np.array(["a"]), np.array(["b"])])
    with pytest.raises(RuntimeError):
        default_collate([ember.ones(2), ember.ones(3)])


# ---------------------------------------------------------------- DataLoader
def test_dataloader_batching():
    x, y = ember.arange(20.0).reshape(10, 2), ember.arange(10)
    dl = DataLoader(TensorDataset(x, y), batch_size=4)
    batches = list(dl)
    assert len(dl) == 3 and len(batches) == 3 and isinstance(batches[0], list)
    assert batches[0][0].shape == (4, 2) and batches[-1][1].tolist() == [8, 9]
    assert [len(b[1]) for b in DataLoader(TensorDataset(x, y), batch_size=4, drop_last=True)] == [4, 4]
    assert len(DataLoader(TensorDataset(x, y), batch_size=4, drop_last=True)) == 2
    single = list(DataLoader(Squares(3), batch_size=None))
    assert single == [0, 1, 4]
    assert [b.tolist() for b in DataLoader(Squares(5), batch_size=2)] == [[0, 1], [4, 9], [16]]


def test_dataloader_shuffle_and_generator():
    ds = Squares(10)
    seen = [b.tolist() for b in DataLoader(ds, batch_size=3, shuffle=True, generator=ember.Generator().manual_seed(0))]
    flat = [v for b in seen for v in b]
    assert sorted(flat) == [i * i for i in range(10)] and flat != [i * i for i in range(10)]
    again = [b.tolist() for b in DataLoader(ds, batch_size=3, shuffle=True, generator=ember.Generator().manual_seed(0))]
    assert again == seen
    dl = DataLoader(ds, batch_size=10, shuffle=True)
    ember.manual_seed(7)
    e1 = next(iter(dl)).tolist()
    e2 = next(iter(dl)).tolist()
    ember.manual_seed(7)
    assert next(iter(dl)).tolist() == e1 and e1 != e2  # reshuffled every epoch, reproducible from the seed


def test_dataloader_samplers_and_collate_fn():
    ds = Squares(6)
    dl = DataLoader(ds, batch_size=2, sampler=[5, 4, 3, 2, 1, 0])
    assert [b.tolist() for b in dl] == [[25, 16], [9, 4], [1, 0]]
    bs = DataLoader(ds, batch_sampler=[[0, 5], [1]])
    assert [b.tolist() for b in bs] == [[0, 25], [1]] and len(bs) == 2
    assert list(DataLoader(ds, batch_size=3, collate_fn=lambda b: sum(b))) == [5, 50]
    assert isinstance(DataLoader(ds).sampler, SequentialSampler)
    assert isinstance(DataLoader(ds, shuffle=True).sampler, RandomSampler)
    assert DataLoader(ds, batch_size=None).batch_sampler is None


def test_dataloader_iterable_dataset():
    dl = DataLoader(Stream(7), batch_size=3)
    assert [b.tolist() for b in dl] == [[0, 1, 2], [3, 4, 5], [6]] and len(dl) == 3
    assert [b.tolist() for b in DataLoader(Stream(7), batch_size=3, drop_last=True)] == [[0, 1, 2], [3, 4, 5]]
    assert [int(v) for v in DataLoader(Stream(3), batch_size=None)] == [0, 1, 2]
    with pytest.raises(ValueError, match="DataLoader with IterableDataset: expected unspecified shuffle option"):
        DataLoader(Stream(3), shuffle=True)
    with pytest.raises(ValueError, match="expected unspecified sampler option"):
        DataLoader(Stream(3), sampler=[0])


def test_dataloader_errors():
    ds = Squares(4)
    with pytest.raises(ValueError, match="num_workers option should be non-negative"):
        DataLoader(ds, num_workers=-1)
    with pytest.raises(ValueError, match="sampler option is mutually exclusive with shuffle"):
        DataLoader(ds, sampler=[0], shuffle=True)
    with pytest.raises(ValueError, match="batch_sampler option is mutually exclusive with batch_size, shuffle, "
                                         "sampler, and drop_last"):
        DataLoader(ds, batch_sampler=[[0]], batch_size=2)
    with pytest.raises(ValueError, match="batch_size=None option disables auto-batching and is mutually exclusive "
                                         "with drop_last"):
        DataLoader(ds, batch_size=None, drop_last=True)
    dl = DataLoader(ds)
    with pytest.raises(ValueError, match="batch_size attribute should not be set after DataLoader is initialized"):
        dl.batch_size = 3
    with pytest.warns(UserWarning, match="'pin_memory' argument is set as true but no accelerator is found"):
        DataLoader(ds, pin_memory=True)


def test_worker_info():
    assert get_worker_info() is None
    seen = []

    class Probe(Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            seen.append(get_worker_info())
            return i

    list(DataLoader(Probe(), batch_size=2))
    assert seen == [None, None]


def test_mnist_like_pipeline():
    """Dataset -> DataLoader -> model step, with numpy samples collated into tensors."""
    import ember.nn as nn

    class Arrays(Dataset):
        def __len__(self):
            return 12

        def __getitem__(self, i):
            return np.full((1, 4, 4), i, dtype=np.float32), i % 3

    model = nn.Sequential(nn.Flatten(), nn.Linear(16, 3))
    opt = ember.optim.SGD(model.parameters(), lr=0.01)
    n = 0
    for xb, yb in DataLoader(Arrays(), batch_size=5, shuffle=True):
        assert xb.dtype is ember.float32 and yb.dtype is ember.int64 and xb.shape[1:] == (1, 4, 4)
        opt.zero_grad()
        out = model(xb)
        loss = ((out - ember.zeros(out.shape)) ** 2).mean()
        loss.backward()
        opt.step()
        n += xb.shape[0]
    assert n == 12 and math.isfinite(loss.item())
