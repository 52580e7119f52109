#pragma once
// tenferro: tensors, the StdTensorOp primitive set and the traced API.
#include "tenferro/error.hpp"
#include "tenferro/ops/make.hpp"
#include "tenferro/tensor.hpp"
#include "tenferro/threads.hpp"
#include "tenferro/traced.hpp"
#include "tenferro/transforms.hpp"
