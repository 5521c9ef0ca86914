package funcset

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeKernel refuses any set holding one of bad, with that function's
// error, and counts the attempts and the functions it attached.
type fakeKernel struct {
	bad      map[string]error
	attempts int
	attached map[string]int
}

func (k *fakeKernel) attach(set []string) error {
	k.attempts++
	for _, f := range set {
		if err := k.bad[f]; err != nil {
			return fmt.Errorf("link of %d functions: %w", len(set), err)
		}
	}
	for _, f := range set {
		k.attached[f]++
	}
	return nil
}

func TestBisectFindsEveryRefusal(t *testing.T) {
	var names []string
	for i := range 1000 {
		names = append(names, fmt.Sprintf("f%d", i))
	}
	noreturn, deny := errors.New("EINVAL"), errors.New("EBUSY")
	k := &fakeKernel{bad: map[string]error{"f3": noreturn, "f500": deny, "f501": noreturn, "f999": deny},
		attached: map[string]int{}}
	refused, err := Bisect(names, k.attach)
	require.NoError(t, err)
	assert.Len(t, refused, 4)
	for f, want := range k.bad {
		assert.ErrorIs(t, refused[f], want, f)
		assert.Equal(t, "link of 1 functions: "+want.Error(), refused[f].Error(), "the error of its attempt alone")
	}
	for _, f := range names {
		if k.bad[f] == nil {
			assert.Equal(t, 1, k.attached[f], "%s attached once", f)
		}
	}
	assert.LessOrEqual(t, k.attempts, 4*2*10+1, "about 2 log2(1000) attempts per refusal")

	k = &fakeKernel{attached: map[string]int{}}
	refused, err = Bisect(names, k.attach)
	require.NoError(t, err)
	assert.Empty(t, refused)
	assert.Equal(t, 1, k.attempts, "a set the kernel takes is one attempt")
	refused, err = Bisect(nil, k.attach)
	require.NoError(t, err)
	assert.Empty(t, refused)
}

func TestBisectStopsOnOtherErrors(t *testing.T) {
	names := []string{"a", "b", "c", "d"}
	var tried [][]string
	_, err := Bisect(names, func(set []string) error {
		tried = append(tried, slices.Clone(set))
		if len(set) == 2 {
			return fmt.Errorf("BPF_LINK_CREATE: cannot allocate memory: %w", ErrNotRefusal)
		}
		return errors.New("EINVAL")
	})
	assert.ErrorIs(t, err, ErrNotRefusal)
	assert.Equal(t, [][]string{{"a", "b", "c", "d"}, {"a", "b"}}, tried)
}
