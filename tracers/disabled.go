package tracers

import (
	"fmt"
	"os"
	"strings"
)

// DisableEnv takes mechanisms out of a run as "name: reason; ..." entries,
// e.g. one that crashes the CI guest's kernel (the matrix reports it).
const DisableEnv = "TRACEBENCH_DISABLE"

// DisabledError says a mechanism was taken out of the run by DisableEnv. It
// wraps ErrUnsupported, so that callers skip it like a missing feature.
type DisabledError struct {
	Mechanism string
	Reason    string
}

func (e *DisabledError) Error() string {
	return fmt.Sprintf("%s disabled by %s: %s", e.Mechanism, DisableEnv, e.Reason)
}

func (e *DisabledError) Unwrap() error { return ErrUnsupported }

// disabled returns a *DisabledError if DisableEnv names mechanism.
func disabled(mechanism string) error {
	for _, entry := range strings.Split(os.Getenv(DisableEnv), ";") {
		name, reason, _ := strings.Cut(entry, ":")
		if strings.TrimSpace(name) == mechanism {
			return &DisabledError{Mechanism: mechanism, Reason: strings.TrimSpace(reason)}
		}
	}
	return nil
}
