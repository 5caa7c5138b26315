"""Immutable list and dict types for the args and kwargs of fx Nodes (torch.fx.immutable_collections)."""

__all__ = ["immutable_list", "immutable_dict"]


def _no_mutation(self, *args, **kwargs):
    raise TypeError(f"'{type(self).__name__}' object does not support mutation. "
                    "Use a copy (list(x) / dict(x)) and assign it back to the Node instead.")


class immutable_list(list):
    """A list whose mutating methods raise TypeError (the type of list arguments in a Node)."""

    __setitem__ = __delitem__ = __iadd__ = __imul__ = _no_mutation
    append = extend = insert = pop = remove = clear = sort = reverse = _no_mutation

    def __hash__(self):
        return hash(tuple(self))

    def __reduce__(self):
        return (immutable_list, (tuple(iter(self)),))


class immutable_dict(dict):
    """A dict whose mutating methods raise TypeError (the type of dict arguments in a Node)."""

    __setitem__ = __delitem__ = __ior__ = _no_mutation
    update = pop = popitem = clear = setdefault = _no_mutation

    def __hash__(self):
        return hash(tuple(self.items()))

    def __reduce__(self):
        return (immutable_dict, (list(self.items()),))
