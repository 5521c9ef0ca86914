// Package kernel describes the running kernel to every other package,
// the internal ones included: it imports no tracebench package.
package kernel

import (
	"sync"

	"golang.org/x/sys/unix"
)

// Release returns the running kernel's uname release, e.g.
// "7.2.13+deb14-amd64", or "unknown (uname: ...)" if uname fails.
var Release = sync.OnceValue(func() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "unknown (uname: " + err.Error() + ")"
	}
	return unix.ByteSliceToString(u.Release[:])
})
