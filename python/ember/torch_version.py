"""TorchVersion: ember.__version__ as a str that compares as a version (PEP 440 order), against
strings ("0.1", "0.1.0rc1") and tuples ((0, 1)), as torch.__version__ does."""
import re

__all__ = ["TorchVersion"]

_PATTERN = re.compile(r"^v?(\d+(?:\.\d+)*)(?:[-_.]?(a|b|c|rc|alpha|beta|pre|preview)[-_.]?(\d*))?"
                      r"(?:[-_.]?(?:post|rev|r)[-_.]?(\d*))?(?:[-_.]?dev[-_.]?(\d*))?(?:\+([a-z0-9.]+))?$", re.I)
_PRE = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "c": 2, "rc": 2, "pre": 2, "preview": 2}


class InvalidVersion(ValueError):
    """A string that is not a PEP 440 version."""


def _key(text):
    m = _PATTERN.match(str(text).strip())
    if m is None:
        raise InvalidVersion(f"Invalid version: '{text}'")
    release, pre, pre_n, post, dev, local = m.groups()
    nums = [int(x) for x in release.split(".")]
    while len(nums) > 1 and nums[-1] == 0:  # 1.0 == 1.0.0
        nums.pop()
    inf = float("inf")
    # ordering within a release: X.devN < XaN < XbN < XrcN < X < X.postN
    if pre is not None:
        pre_key = (_PRE[pre.lower()], int(pre_n or 0))
    elif dev is not None and post is None:
        pre_key = (-inf, 0)
    else:
        pre_key = (inf, 0)
    post_key = int(post or 0) if post is not None else -1
    dev_key = int(dev or 0) if dev is not None else inf
    local_key = tuple((0, int(p)) if p.isdigit() else (-1, p) for p in re.split(r"[.]", local)) if local else ()
    return (tuple(nums), pre_key, post_key, dev_key, local_key)


def _other_key(other):
    if isinstance(other, (tuple, list)):
        return _key(".".join(str(x) for x in other))
    if isinstance(other, str):
        return _key(other)
    raise InvalidVersion(f"{other!r} is not a version (a str or a tuple of ints)")


class TorchVersion(str):
    """A version string that compares by version, not by characters: "0.10" > "0.9"."""

    def _cmp(self, other, op):
        try:
            return op(_key(self), _other_key(other))
        except InvalidVersion:
            if isinstance(other, str) and not isinstance(other, TorchVersion):
                raise
            return NotImplemented

    def __lt__(self, other):
        return self._cmp(other, lambda a, b: a < b)

    def __le__(self, other):
        return self._cmp(other, lambda a, b: a <= b)

    def __gt__(self, other):
        return self._cmp(other, lambda a, b: a > b)

    def __ge__(self, other):
        return self._cmp(other, lambda a, b: a >= b)

    def __eq__(self, other):
        try:
            return _key(self) == _other_key(other)
        except InvalidVersion:
            return str.__eq__(self, other)

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = str.__hash__
