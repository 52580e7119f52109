#pragma once
// tidu: AD as graph transforms (linearize, linear_transpose, higher order by resolve) over any op
// set satisfying tidu::Primitive.
#include "tidu/ad_error.hpp"
#include "tidu/linear_transpose.hpp"
#include "tidu/linearize.hpp"
#include "tidu/linearized_graph.hpp"
#include "tidu/partial_transpose.hpp"
#include "tidu/primitive.hpp"
#include "tidu/transforms.hpp"
