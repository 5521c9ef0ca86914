package main

import (
	"fmt"
	"os"
	"strings"

	"tracebench/matrix"
)

// checkOnly holds the outcome line of one guest run's output (opt.check,
// as `make test` saves it) to the column of the one kernel -only names,
// with matrix.Check, the rule `make matrix` applies. It runs nothing and
// returns 1 on any mismatch, a missing outcome line included.
func checkOnly(opt options, exp matrix.Expectations) (int, error) {
	if opt.only == "" || strings.Contains(opt.only, ",") {
		return 0, fmt.Errorf("-check needs -only with the one kernels.tsv selector of the kernel that ran, got %q", opt.only)
	}
	kernels, err := exp.Select([]string{opt.only})
	if err != nil {
		return 0, err
	}
	r := matrix.Run{Kernel: kernels[0]}
	if opt.kernelDir != "" {
		if err := readMarker(opt.kernelDir, &r); err != nil {
			return 0, err
		}
	}
	out, err := os.Open(opt.check)
	if err != nil {
		return 0, err
	}
	defer out.Close()
	if r.Outcomes, err = matrix.ParseOutcomes(out); err != nil {
		r.Problem = fmt.Sprintf("no outcome table in %s: %v", opt.check, err)
	}
	mismatches := matrix.Check(exp, r)
	for _, m := range mismatches {
		progressf("mismatch: %s", m)
	}
	progressf("%s (%s) against the %s column of %s: %s", opt.check, orUnknown(r.ABI), opt.only, opt.kernels,
		verdict(len(mismatches)))
	return exitFor(mismatches), nil
}

func verdict(mismatches int) string {
	if mismatches == 0 {
		return "as expected"
	}
	return fmt.Sprintf("NOT as expected, mismatches: %d", mismatches)
}
