// What report/ receives as data about the backends and models (report/backend_catalog.hpp, MarkdownExtras),
// filled from the backend registry and the model presets, so that report/ depends on neither.
#pragma once

#include <string>
#include <vector>

#include "report/backend_catalog.hpp"
#include "report/markdown.hpp"

namespace attnbench {

// Every registered backend (name, models) in registry order, its library twin, the change under test and the
// library script's version keys. Built on each call (cheap); pass it to the report writers.
BackendCatalog backend_catalog();

// What the Markdown report needs from the layers above it: each preset's full depth (KV-cache tokens of a
// saving are counted over the whole model) and the figures to link.
MarkdownExtras markdown_extras(const std::vector<std::string>& figures = {});

}  // namespace attnbench
