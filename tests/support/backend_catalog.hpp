// The standard backend catalog the report tests pass explicitly: the three modelled backends, their library
// twins and SGLang twins (scripts/peer_sglang.py), the change trtllm_mha_legacy -> trtllm_mha and the library script's version keys (what the app's
// backend_catalog() builds from the registry; tests/app/backend_catalog_test.cpp checks they agree).
#pragma once

#include "report/backend_catalog.hpp"

namespace attnbench::test {

inline BackendCatalog standard_catalog() {
  BackendCatalog c;
  c.backends = {
      {"flashinfer", "FlashInferAttnBackend", "flashinfer_lib", "FlashInfer's wrappers", "flashinfer_sglang"},
      {"trtllm_mha", "TRTLLMHAAttnBackend(AttentionBackend): the proposed change", "trtllm_lib",
       "FlashInfer's `trtllm_batch_decode_with_kv_cache`", "trtllm_mha_lean_sglang"},
      {"trtllm_mha_legacy", "TRTLLMHAAttnBackend(FlashInferAttnBackend): SGLang today", "", "", "trtllm_mha_sglang"},
  };
  c.change = {"trtllm_mha_legacy", "trtllm_mha"};
  c.library_versions = {{"flashinfer_version", "FlashInfer"}, {"torch_version", "torch"}};
  return c;
}

}  // namespace attnbench::test
