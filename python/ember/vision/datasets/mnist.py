"""MNIST and Fashion-MNIST from the standard IDX files (raw or gzipped), read locally.

FashionMNIST reads /usr/share/datasets/fashion-mnist by default: the Debian package
dataset-fashion-mnist installs train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz,
t10k-images-idx3-ubyte.gz and t10k-labels-idx1-ubyte.gz there. Files are looked up in `root`,
then in root/<ClassName>/raw and root/<ClassName> (torchvision's layout). Nothing is downloaded.
"""
import gzip
import os
import struct

from ... import _C
from .vision import VisionDataset

__all__ = ["MNIST", "FashionMNIST", "read_idx"]

# IDX type codes -> (NumPy dtype, big-endian)
_IDX_TYPES = {0x08: "u1", 0x09: "i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def read_idx(path):
    """The array stored in an IDX file (optionally .gz), as a NumPy array in native byte order."""
    import numpy as np
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    if len(data) < 4:
        raise RuntimeError(f"{path}: not an IDX file (too short)")
    zero, type_code, ndim = struct.unpack(">HBB", data[:4])
    if zero != 0 or type_code not in _IDX_TYPES:
        raise RuntimeError(f"{path}: not an IDX file (bad magic number 0x{zero:04x}{type_code:02x}{ndim:02x})")
    dims = struct.unpack(f">{ndim}I", data[4:4 + 4 * ndim])
    dtype = np.dtype(_IDX_TYPES[type_code])
    count = 1
    for d in dims:
        count *= d
    offset = 4 + 4 * ndim
    if len(data) - offset != count * dtype.itemsize:
        raise RuntimeError(f"{path}: expected {count * dtype.itemsize} bytes of data for shape {tuple(dims)}, found "
                           f"{len(data) - offset}")
    arr = np.frombuffer(data, dtype=dtype, count=count, offset=offset).reshape(dims)
    return arr.astype(dtype.newbyteorder("="), copy=True)


class MNIST(VisionDataset):
    """MNIST digits: 60,000 training / 10,000 test 28x28 grayscale images with labels 0-9.

    Samples are (image, target): the image a 28x28 uint8 NumPy array (what a PIL image is to
    torchvision; transforms.ToTensor turns it into a 1x28x28 float tensor), the target an int.
    `data` (uint8, N x 28 x 28) and `targets` (int64, N) hold the whole split as tensors."""

    resources = ["train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                 "t10k-labels-idx1-ubyte"]
    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four", "5 - five", "6 - six", "7 - seven",
               "8 - eight", "9 - nine"]
    _debian_package = None
    _default_root = None

    def __init__(self, root=None, train=True, transform=None, target_transform=None, download=False):
        if root is None:
            root = self._default_root
            if root is None:
                raise TypeError(f"{type(self).__name__}() missing required argument: 'root'")
        if isinstance(root, (bytes, os.PathLike)):
            root = os.fsdecode(root)
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.train = train
        prefix = "train" if train else "t10k"
        images = self._find(f"{prefix}-images-idx3-ubyte", download)
        labels = self._find(f"{prefix}-labels-idx1-ubyte", download)
        self.data = _C.from_numpy(read_idx(images))
        self.targets = _C.from_numpy(read_idx(labels).astype("int64"))
        if self.data.dim() != 3 or self.targets.dim() != 1 or self.data.size(0) != self.targets.size(0):
            raise RuntimeError(f"{images}, {labels}: expected N images of HxW and N labels, got "
                               f"{tuple(self.data.shape)} and {tuple(self.targets.shape)}")

    def _search_dirs(self):
        name = type(self).__name__
        return [self.root, os.path.join(self.root, name, "raw"), os.path.join(self.root, name)]

    def _find(self, base, download):
        for d in self._search_dirs():
            for fname in (base, base + ".gz"):
                path = os.path.join(d, fname)
                if os.path.isfile(path):
                    return path
        where = ", ".join(self._search_dirs())
        msg = f"{type(self).__name__}: {base}[.gz] not found (looked in {where})."
        if self._debian_package:
            msg += (f" Install the Debian package {self._debian_package} (apt-get install {self._debian_package}), "
                    f"which puts the files in {self._default_root}, or pass root= a directory holding them.")
        else:
            msg += " Pass root= a directory holding the IDX files (raw or .gz)."
        msg += " Ember never downloads datasets" + (" (download=True has no effect)." if download else ".")
        raise RuntimeError(msg)

    @property
    def class_to_idx(self):
        return {c: i for i, c in enumerate(self.classes)}

    @property
    def raw_folder(self):
        return os.path.join(self.root, type(self).__name__, "raw")

    def __getitem__(self, index):
        img = self.data[index].numpy()
        target = int(self.targets[index])
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self):
        return len(self.data)

    def extra_repr(self):
        return f"Split: {'Train' if self.train is True else 'Test'}"


class FashionMNIST(MNIST):
    """Fashion-MNIST (Zalando): 28x28 grayscale images of 10 clothing classes; root defaults to
    /usr/share/datasets/fashion-mnist (Debian package dataset-fashion-mnist)."""

    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
               "Ankle boot"]
    _debian_package = "dataset-fashion-mnist"
    _default_root = "/usr/share/datasets/fashion-mnist"
