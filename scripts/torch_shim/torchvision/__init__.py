# `import torchvision` gives ember.vision (see ../_ember_alias.py)
import _ember_alias

_ember_alias.install("torchvision")
