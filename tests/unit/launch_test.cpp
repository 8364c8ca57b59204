// Launch detection from the launchers' environment variables (runtime/launch.h): Open MPI's
// mpirun, Slurm's srun (only inside a job step), PMI launchers, none; malformed values name the
// variable.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "plansight/runtime/launch.h"

namespace plansight::runtime {
namespace {

Result<LaunchInfo> detect(const std::map<std::string, std::string>& env) {
  return detect_launch([&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

TEST(Launch, NoLauncherVariablesMeansNotLaunched) {
  auto l = detect({{"HOME", "/root"}});
  ASSERT_TRUE(l) << l.error_text();
  EXPECT_FALSE(l->launched());
  EXPECT_EQ(l->size, 1);
  EXPECT_EQ(l->rank, 0);
}

TEST(Launch, OpenMpiMpirun) {
  auto l = detect({{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "8"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                   {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}});
  ASSERT_TRUE(l) << l.error_text();
  EXPECT_EQ(l->launcher, "mpirun");
  EXPECT_EQ(l->rank, 3);
  EXPECT_EQ(l->size, 8);
  EXPECT_EQ(l->local_rank, 1);
  EXPECT_EQ(l->local_size, 4);
}

TEST(Launch, MpirunInsideASlurmAllocationIsMpirun) {
  auto l = detect({{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"}, {"SLURM_PROCID", "0"},
                   {"SLURM_NTASKS", "16"}, {"SLURM_STEP_ID", "0"}});
  ASSERT_TRUE(l) << l.error_text();
  EXPECT_EQ(l->launcher, "mpirun");
  EXPECT_EQ(l->size, 2);
}

TEST(Launch, SrunJobStep) {
  auto l = detect({{"SLURM_PROCID", "5"}, {"SLURM_STEP_NUM_TASKS", "8"}, {"SLURM_NTASKS", "16"}, {"SLURM_LOCALID", "1"},
                   {"SLURM_STEP_ID", "2"}});
  ASSERT_TRUE(l) << l.error_text();
  EXPECT_EQ(l->launcher, "srun");
  EXPECT_EQ(l->rank, 5);
  EXPECT_EQ(l->size, 8);  // the step's tasks, not the allocation's
  EXPECT_EQ(l->local_rank, 1);
}

TEST(Launch, SbatchScriptWithoutAStepIsNotLaunched) {
  // An sbatch script's own shell has SLURM_PROCID=0 and the allocation's SLURM_NTASKS.
  auto l = detect({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "16"}, {"SLURM_JOB_ID", "42"}});
  ASSERT_TRUE(l) << l.error_text();
  EXPECT_FALSE(l->launched());
}

TEST(Launch, PmiLauncher) {
  auto l = detect({{"PMI_RANK", "2"}, {"PMI_SIZE", "4"}, {"MPI_LOCALRANKID", "0"}, {"MPI_LOCALNRANKS", "2"}});
  ASSERT_TRUE(l) << l.error_text();
  EXPECT_EQ(l->launcher, "pmi");
  EXPECT_EQ(l->rank, 2);
  EXPECT_EQ(l->size, 4);
  EXPECT_EQ(l->local_size, 2);
}

TEST(Launch, MalformedValuesNameTheVariable) {
  auto bad = detect({{"OMPI_COMM_WORLD_RANK", "x1"}, {"OMPI_COMM_WORLD_SIZE", "2"}});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.errors().front().field, "OMPI_COMM_WORLD_RANK");
  EXPECT_NE(bad.error_text().find("x1"), std::string::npos);

  auto beyond = detect({{"OMPI_COMM_WORLD_RANK", "4"}, {"OMPI_COMM_WORLD_SIZE", "4"}});
  ASSERT_FALSE(beyond);
  EXPECT_NE(beyond.error_text().find("not below"), std::string::npos);

  auto zero = detect({{"PMI_RANK", "0"}, {"PMI_SIZE", "0"}});
  ASSERT_FALSE(zero);
  EXPECT_EQ(zero.errors().front().field, "PMI_SIZE");

  auto missing = detect({{"PMI_RANK", "0"}});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.errors().front().field, "PMI_SIZE");
}

}  // namespace
}  // namespace plansight::runtime
