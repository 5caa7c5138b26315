#pragma once
// libtorch's templated data layer (torch::data) over Ember: datasets as values with `.map(...)`,
// transforms, samplers and make_data_loader, as libtorch programs use them:
//   auto ds = torch::data::datasets::MNIST(root).map(torch::data::transforms::Normalize<>(0.1307, 0.3081))
//                 .map(torch::data::transforms::Stack<>());
//   auto loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(std::move(ds), 64);
//   for (auto& batch : *loader) { ... batch.data, batch.target ... }
// `torch` must be a namespace (not an alias of `ember`): these names differ from ember::data's.
#include "torch/data/dataloader.h"
#include "torch/data/datasets.h"
#include "torch/data/example.h"
#include "torch/data/samplers.h"
#include "torch/data/transforms.h"
