#pragma once
// computegraph: a generic, AD-agnostic computation-graph engine.
// Pipeline: build (GraphBuilder) -> resolve -> materialize_merge -> compile -> CompiledProgram::run.
#include "computegraph/compile.hpp"
#include "computegraph/compile_cache.hpp"
#include "computegraph/dot.hpp"
#include "computegraph/dump.hpp"
#include "computegraph/error.hpp"
#include "computegraph/graph.hpp"
#include "computegraph/graph_builder.hpp"
#include "computegraph/key_printer.hpp"
#include "computegraph/materialize.hpp"
#include "computegraph/operation.hpp"
#include "computegraph/printer.hpp"
#include "computegraph/resolve.hpp"
#include "computegraph/unzip.hpp"
#include "computegraph/value_key.hpp"
#include "computegraph/verify.hpp"
