#pragma once
// ember::nn: modules, layers, functional, init and safetensors save/load.
#include "ember/nn/containers.h"
#include "ember/nn/functional.h"
#include "ember/nn/init.h"
#include "ember/nn/layers.h"
#include "ember/nn/module.h"
#include "ember/nn/rnn.h"
#include "ember/nn/utils.h"
#include "ember/nn/serialize.h"
