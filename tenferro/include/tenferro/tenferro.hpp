#pragma once
// tenferro: tensors, the StdTensorOp primitive set and the traced API.
#include "tenferro/buffer_pool.hpp"
#include "tenferro/custom_op.hpp"
#include "tenferro/error.hpp"
#include "tenferro/exec_options.hpp"
#include "tenferro/math.hpp"
#include "tenferro/math_accuracy.hpp"
#include "tenferro/operand_space.hpp"
#include "tenferro/ops/make.hpp"
#include "tenferro/tensor.hpp"
#include "tenferro/threads.hpp"
#include "tenferro/traced.hpp"
#include "tenferro/transforms.hpp"
