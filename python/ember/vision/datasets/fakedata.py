"""FakeData: random images, the same image for the same index on every access."""
from ... import _C
from ..._random import get_rng_state, manual_seed, set_rng_state
from .vision import VisionDataset

__all__ = ["FakeData"]


class FakeData(VisionDataset):
    """`size` images of shape image_size (C, H, W) with targets in [0, num_classes).

    Image `index` is drawn with the global RNG seeded with index + random_offset (the caller's RNG
    state is restored afterwards), as a standard-normal C x H x W tensor scaled by 255 and cast to
    8 bits the way torchvision's ToPILImage does. Like the MNIST images here, it is returned as an
    H x W x C uint8 NumPy array (H x W for one channel) where torchvision gives a PIL image, so
    transforms.ToTensor turns it into a C x H x W float tensor."""

    def __init__(self, size=1000, image_size=(3, 224, 224), num_classes=10, transform=None, target_transform=None,
                 random_offset=0):
        super().__init__(None, transform=transform, target_transform=target_transform)
        self.size = size
        self.num_classes = num_classes
        self.image_size = image_size
        self.random_offset = random_offset

    def __getitem__(self, index):
        if index >= len(self):
            raise IndexError(f"{self.__class__.__name__} index out of range")
        rng_state = get_rng_state()
        manual_seed(index + self.random_offset)
        img = _C._ops.randn(*self.image_size)
        target = int(_C._ops.randint(0, self.num_classes, size=(1,), dtype=_C.int64)[0])
        set_rng_state(rng_state)
        arr = img.mul(255).to(_C.uint8).numpy()
        arr = arr[0] if arr.shape[0] == 1 else arr.transpose(1, 2, 0).copy()
        if self.transform is not None:
            arr = self.transform(arr)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return arr, target

    def __len__(self):
        return self.size
