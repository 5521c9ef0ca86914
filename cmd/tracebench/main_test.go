package main

import (
	"os"
	"testing"

	"tracebench/workload"
)

// cliEnv makes this test binary run the command's main instead of the
// tests, so that a test can run the CLI as a process of its own (with its
// own signals, exit status and output) without a separate build step.
const cliEnv = "TRACEBENCH_TEST_RUN_CLI"

func TestMain(m *testing.M) {
	workload.RunHelperIfRequested()
	workload.RunRoleIfRequested(zeroReadsEnv, "zero-reads helper", readZero)
	if os.Getenv(cliEnv) == "1" {
		main() // exits
	}
	os.Exit(m.Run())
}
