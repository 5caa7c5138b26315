"""What every DataLoader iterator shares (_BaseDataLoaderIter), and the one that loads in the calling
process (num_workers=0). The iterator with worker processes is in _multiprocessing_iter.py; both are
below dataloader.py, which picks one."""
import warnings

from ... import _C
from ._utils.fetch import _IterableDatasetFetcher, _MapDatasetFetcher
from ._utils.pin_memory import pin_memory as _pin_memory


class _BaseDataLoaderIter:
    """One pass over a DataLoader: the sampler, the counts and the checks common to both iterators."""

    def __init__(self, loader):
        self._dataset = loader.dataset
        self._dataset_kind = loader._dataset_kind
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._collate_fn = loader.collate_fn
        self._pin_memory = bool(loader.pin_memory) and _C._cuda_is_available()  # (else the loader warned)
        # like PyTorch: the workers' base seed, drawn from the loader's generator (also without workers,
        # so an epoch consumes the same RNG state either way)
        self._base_seed = int(_C._ops.empty((), dtype=_C.int64).random_(generator=loader.generator).item())

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def __iter__(self):
        return self

    def __len__(self):
        return len(self._index_sampler)

    def _next_index(self):
        return next(self._sampler_iter)

    def __next__(self):
        data = self._next_data()
        if self._pin_memory:
            data = _pin_memory(data)
        self._num_yielded += 1
        if (self._dataset_kind == "iterable" and self._IterableDataset_len_called is not None
                and self._num_yielded > self._IterableDataset_len_called):
            warnings.warn(f"Length of IterableDataset {self._dataset} was reported to be "
                          f"{self._IterableDataset_len_called} (when accessing len(dataloader)), but "
                          f"{self._num_yielded} samples have been fetched. ", stacklevel=2)
        return data

    def __getstate__(self):
        raise NotImplementedError("{} cannot be pickled", self.__class__.__name__)


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    """Loads in the calling process."""

    def __init__(self, loader):
        super().__init__(loader)
        self._reset(loader, first_iter=True)
        fetcher = _IterableDatasetFetcher if self._dataset_kind == "iterable" else _MapDatasetFetcher
        self._dataset_fetcher = fetcher(self._dataset, self._auto_collation, self._collate_fn, self._drop_last)

    def _next_data(self):
        return self._dataset_fetcher.fetch(self._next_index())
