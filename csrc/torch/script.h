#pragma once
// <torch/script.h>: what libtorch programs that load scripted modules include. Ember has no
// TorchScript loader yet, so this is the frontend API of <torch/torch.h>.
#include "torch/torch.h"
