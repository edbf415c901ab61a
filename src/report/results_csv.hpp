// Forwarding header: the results CSV now lives in report/results_io.hpp (with the JSON and ResultSet).
// Kept so that files outside report/ still build; include report/results_io.hpp instead.
#pragma once

#include "report/results_io.hpp"
