// ModelRunner: what a backend's constructor receives in SGLang (model_runner), reduced to what attention
// backends read: the device, the model, the server arguments, the process environment and the pools.
#pragma once

#include "device/device.hpp"
#include "engine/memory_pool.hpp"
#include "engine/model_config.hpp"
#include "engine/server_args.hpp"

namespace attnbench {

struct ModelRunner {
  ModelRunner(Device& d, ModelConfig m, ServerArgs s)
      : device(d), model_config(std::move(m)), server_args(std::move(s)), env(server_args) {}

  Device& device;
  ModelConfig model_config;
  ServerArgs server_args;
  ProcessEnv env;                                 // os.environ as the backends see and change it
  ReqToTokenPool* req_to_token_pool = nullptr;    // not owned; null when only construction is measured
  TokenToKVPool* token_to_kv_pool = nullptr;      // not owned; null when only construction is measured

  int context_len() const { return server_args.effective_context_len(model_config); }  // max_context_len
  // The architecture whose path the backends take: --arch, else the device's (CPU: the modelled H200, 90).
  int arch() const { return server_args.arch > 0 ? server_args.arch : device.sm_version(); }
  const SglangProfile& profile() const { return server_args.profile(); }
};

}  // namespace attnbench
