#pragma once
// tenferro: tensors, traced functions and their transforms: the user tier, everything a program
// of tensors needs. It includes no header of the graph engine (computegraph) or of tidu beyond
// their error classes (the one hierarchy every error derives from), and compiles fast.
//
// Opt-in tiers: tenferro/custom_op.hpp and tenferro/ops/*.hpp define and record ops (custom ops,
// new Traced functions); tenferro/program.hpp is the traced program and its pipeline;
// tenferro/operand_space.hpp is the AD test kit's view of tensors. Everything under src/ is
// internal.
#include "tenferro/buffer_pool.hpp"
#include "tenferro/control_flow.hpp"
#include "tenferro/conv.hpp"
#include "tenferro/eager.hpp"
#include "tenferro/einsum.hpp"
#include "tenferro/index_expr.hpp"
#include "tenferro/indexing.hpp"
#include "tenferro/jacobian.hpp"
#include "tenferro/linalg.hpp"
#include "tenferro/optim.hpp"
#include "tenferro/random.hpp"
#include "tenferro/semiring.hpp"
#include "tenferro/sort_scan.hpp"
#include "tenferro/sparse.hpp"
#include "tenferro/error.hpp"
#include "tenferro/exec_options.hpp"
#include "tenferro/math.hpp"
#include "tenferro/math_accuracy.hpp"
#include "tenferro/tensor.hpp"
#include "tenferro/threads.hpp"
#include "tenferro/traced.hpp"
#include "tenferro/transforms.hpp"
#include "tenferro/tree.hpp"
#include "tenferro/vmap.hpp"
