// The report's view of the backends (report/backend_catalog.hpp), filled from the backend registry.
#pragma once

#include "report/backend_catalog.hpp"

namespace attnbench {

// Every registered backend (name, models) in registry order, its library twin, the change under test and the
// library script's version keys. Built on each call (cheap); pass it to the report writers.
BackendCatalog backend_catalog();

}  // namespace attnbench
