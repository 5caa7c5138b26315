#pragma once
// ember::optim: optimizers and learning-rate schedulers.
#include "ember/optim/optimizer.h"
#include "ember/optim/schedulers.h"
