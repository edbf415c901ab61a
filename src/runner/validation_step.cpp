#include "runner/validation_step.hpp"

#include <algorithm>

namespace attnbench {

ValidationStep run_validation_step(const Case& c, AttentionBackend& backend, Device& device, Workload& wl,
                                   const std::vector<ReferenceLayer>& refs) {
  ValidationStep out;
  out.requests_checked = c.batch;
  const ForwardBatch& fb = wl.forward_batch();
  const std::vector<int> vlayers = validated_layers(c.model.num_layers);
  std::vector<unsigned char> host(static_cast<std::size_t>(wl.output_bytes()));  // [T, Hq, D] storage dtype
  PhaseScope ps(device.ledger(), "step");
  backend.init_forward_metadata(fb);
  std::uint64_t h = 1469598103934665603ull;
  for (const Layer& layer : wl.layers()) {
    wl.poison_output();
    backend.forward(wl.io(), layer, fb);
    device.copy(host.data(), wl.output().data(), wl.output_bytes());
    device.synchronize();
    h = hash_bytes(host.data(), host.size(), h);
    if (layer.layer_id == 0) out.first_layer = host;
    for (std::size_t v = 0; v < vlayers.size(); ++v)
      if (vlayers[v] == layer.layer_id) {
        out.err.merge(compare_with_reference(c, refs[v], host.data()));
        out.sampled = out.sampled || refs[v].sampled;
        out.requests_checked = std::min(out.requests_checked, refs[v].requests_checked);
      }
  }
  out.output_hash = h;
  out.last_layer = std::move(host);
  return out;
}

void fill_validation(ResultRow& row, const ValidationStep& v) {
  row.ref_max_abs_err = v.err.max_abs;
  row.ref_rel_l2_err = v.err.rel_l2();
  row.ref_mismatch_frac = v.err.mismatch_frac();
  row.ref_pass = v.err.pass();
}

std::string validation_note(const Case& c, const ValidationStep& v) {
  std::string note = "ref: layers";
  for (int l : validated_layers(c.model.num_layers)) note += " " + std::to_string(l);
  if (v.sampled) note += ", first/last rows of each request";
  if (v.requests_checked < c.batch)
    note += ", " + std::to_string(v.requests_checked) + "/" + std::to_string(c.batch) + " requests";
  if (v.err.nans > 0) note += ", " + std::to_string(v.err.nans) + " NaN/unwritten elements";
  return note;
}

}  // namespace attnbench
