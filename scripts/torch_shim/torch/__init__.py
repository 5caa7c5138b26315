# `import torch` gives ember (see ../_ember_alias.py)
import _ember_alias

_ember_alias.install("torch")
