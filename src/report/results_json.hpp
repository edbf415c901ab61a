// Forwarding header: the JSON report now lives in report/results_io.hpp (with the CSV and ResultSet).
// Kept so that files outside report/ still build; include report/results_io.hpp instead.
#pragma once

#include "report/results_io.hpp"
