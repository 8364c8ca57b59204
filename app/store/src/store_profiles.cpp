// Hardware profiles: the probe's calibration as JSON, one row per measurement so that older
// profiles stay comparable; the estimator reads the newest for its device.
#include "in_transaction.h"
#include "plansight/store/store.h"
#include "sqlite_statement.h"

namespace plansight::store {
namespace {

using detail::Statement;

Result<HardwareProfileRecord> read_profile(const Statement& row) {
  HardwareProfileRecord r;
  r.id = row.int64(0);
  r.created_at = row.text(1);
  r.device = row.text(2);
  r.profile = nlohmann::json::parse(row.text(3), nullptr, /*allow_exceptions=*/false);
  if (r.profile.is_discarded()) {
    return make_error("hardware_profiles.profile_json",
                      "hardware profile " + std::to_string(r.id) + ": the stored profile is not valid JSON");
  }
  return r;
}

}  // namespace

Result<std::int64_t> Store::save_hardware_profile(const std::string& device, const nlohmann::json& profile) {
  if (device.empty()) return make_error("hardware_profile.device", "a hardware profile needs a device name");
  return detail::in_transaction(*this, [&]() -> Result<std::int64_t> {
    auto stmt = Statement::prepare(db_.get(), path_,
                                   "INSERT INTO hardware_profiles (device, profile_json) VALUES (?, ?)");
    if (!stmt) return stmt.errors();
    stmt->bind(1, device).bind(2, profile.dump());
    if (auto st = stmt->run("saving the hardware profile of " + device); !st) return st.errors();
    return static_cast<std::int64_t>(sqlite3_last_insert_rowid(db_.get()));
  });
}

Result<HardwareProfileRecord> Store::load_hardware_profile(std::int64_t profile_id) {
  auto stmt = Statement::prepare(
      db_.get(), path_, "SELECT id, created_at, device, profile_json FROM hardware_profiles WHERE id = ?");
  if (!stmt) return stmt.errors();
  auto row = stmt->bind(1, profile_id).step("reading hardware profile " + std::to_string(profile_id));
  if (!row) return row.errors();
  if (!*row) {
    return make_error("hardware_profile",
                      "no hardware profile with id " + std::to_string(profile_id) + " in " + path_.string());
  }
  return read_profile(*stmt);
}

Result<HardwareProfileRecord> Store::latest_hardware_profile(const std::string& device) {
  auto stmt = Statement::prepare(db_.get(), path_,
                                 "SELECT id, created_at, device, profile_json FROM hardware_profiles WHERE "
                                 "device = ? ORDER BY id DESC LIMIT 1");
  if (!stmt) return stmt.errors();
  auto row = stmt->bind(1, device).step("reading the hardware profile of " + device);
  if (!row) return row.errors();
  if (!*row) {
    return make_error("hardware_profile", "no hardware profile for device '" + device + "' in " +
                                              path_.string() + "; run the probe's calibration on it first");
  }
  return read_profile(*stmt);
}

}  // namespace plansight::store
