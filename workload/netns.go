package workload

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"tracebench/internal/poll"
)

// netnsFD is where the helper finds its network namespace (ExtraFiles[2]).
const netnsFD = stepsFD + 1

// socketPeer is the caller's side of a DelayedSocketRead: a network
// namespace of the run's own, the listener the helper connects to inside
// it, the accepted connection the caller writes to, and a duplicate of the
// helper's socket whose FIONREAD tells whether the helper took the bytes.
//
// The namespace has no name (no bind mount in /run/netns, unlike `ip netns
// add`): it lives only while a descriptor, socket or thread refers to it,
// and all of those are closed or killed by the kernel when the processes
// exit, so no exit, however abrupt, leaves it behind.
type socketPeer struct {
	ns       *os.File // the namespace, passed to the helper as netnsFD
	ino      uint64   // its nsfs inode, the N of net:[N]
	listener *os.File
	addr     string // listener's address, 127.0.0.1:port inside ns
	conn     *os.File
	reader   *os.File // the helper's socket, duplicated by pidfd_getfd(2)
}

// newSocketPeer creates the namespace, brings its loopback up and listens
// on it. The namespace switch is per thread, so it happens on a locked
// thread of its own.
func newSocketPeer() (*socketPeer, error) {
	s := &socketPeer{}
	errc := make(chan error, 1)
	go func() { errc <- s.setUpOnLockedThread() }()
	if err := <-errc; err != nil {
		s.close()
		return nil, fmt.Errorf("private network namespace: %w", err)
	}
	return s, nil
}

func (s *socketPeer) setUpOnLockedThread() error {
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	defer orig.Close()
	ns, err := netns.New()
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("unshare(CLONE_NEWNET): %w", err)
	}
	s.ns = os.NewFile(uintptr(ns), "netns")
	setupErr := s.listenInNetNS()
	if err := netns.Set(orig); err != nil {
		// Left locked, the thread exits with this goroutine instead of
		// running other goroutines in the wrong namespace.
		return errors.Join(setupErr, fmt.Errorf("back to the original namespace: %w", err))
	}
	runtime.UnlockOSThread()
	return setupErr
}

// listenInNetNS runs in the new namespace: sockets keep the namespace
// they were created in.
func (s *socketPeer) listenInNetNS() error {
	var st unix.Stat_t
	if err := unix.Fstat(int(s.ns.Fd()), &st); err != nil {
		return err
	}
	s.ino = st.Ino
	if err := loopbackUp(); err != nil {
		return err
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	s.listener = os.NewFile(uintptr(fd), "listener")
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return fmt.Errorf("bind 127.0.0.1:0: %w", err)
	}
	if err := unix.Listen(fd, 1); err != nil {
		return err
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return err
	}
	s.addr = fmt.Sprintf("127.0.0.1:%d", sa.(*unix.SockaddrInet4).Port)
	return nil
}

// loopbackUp sets IFF_UP on lo, as `ip link set lo up` does: a new
// namespace's loopback is down.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("SIOCGIFFLAGS lo: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("SIOCSIFFLAGS lo up: %w", err)
	}
	return nil
}

// accept takes the helper's connection, which it made before reporting
// ready, and duplicates the helper's end, its descriptor helperFD.
func (s *socketPeer) accept(helper, helperFD int) error {
	fd, _, err := unix.Accept4(int(s.listener.Fd()), unix.SOCK_CLOEXEC)
	if err != nil {
		return fmt.Errorf("accept: %w", err)
	}
	s.conn = os.NewFile(uintptr(fd), "conn")
	if err := s.listener.Close(); err != nil {
		return err
	}
	s.listener = nil
	pidfd, err := unix.PidfdOpen(helper, 0)
	if err != nil {
		return fmt.Errorf("pidfd_open: %w", err)
	}
	defer unix.Close(pidfd)
	dup, err := unix.PidfdGetfd(pidfd, helperFD, 0)
	if err != nil {
		return fmt.Errorf("pidfd_getfd of the helper's socket: %w", err)
	}
	s.reader = os.NewFile(uintptr(dup), "helper-socket")
	return nil
}

// pending returns the bytes written that the helper has not read yet: not
// yet acknowledged by its end (TIOCOUTQ; its kernel queues the bytes
// before acknowledging them) or queued there unread (FIONREAD).
func (s *socketPeer) pending() (int, error) {
	unacked, err := unix.IoctlGetInt(int(s.conn.Fd()), unix.TIOCOUTQ)
	if err != nil {
		return 0, err
	}
	unread, err := unix.IoctlGetInt(int(s.reader.Fd()), unix.TIOCINQ)
	return unacked + unread, err
}

func (s *socketPeer) close() error {
	var errs []error
	for _, f := range []*os.File{s.reader, s.conn, s.listener, s.ns} {
		if f != nil {
			errs = append(errs, f.Close())
		}
	}
	return errors.Join(errs...)
}

// connectInNetNS runs in the helper: it moves the calling (locked) thread
// into the namespace at netnsFD and connects a blocking TCP socket to addr
// there. Connecting to 127.0.0.1 from any other namespace would not reach
// the caller's listener.
func connectInNetNS(addr string) (int, error) {
	if err := netns.Set(netns.NsHandle(netnsFD)); err != nil {
		return -1, fmt.Errorf("setns: %w", err)
	}
	unix.Close(netnsFD) // the thread holds the namespace now
	host, port, _ := strings.Cut(addr, ":")
	portNum, err := strconv.Atoi(port)
	if err != nil || host != "127.0.0.1" {
		return -1, fmt.Errorf("bad socket address %q", addr)
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if err := unix.Connect(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}, Port: portNum}); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("connect %s: %w", addr, err)
	}
	return fd, nil
}

// NetNSHolders lists what keeps the network namespace with nsfs inode ino
// alive, as far as user space can tell: threads in it and descriptors of it
// (net:[ino] under /proc/*/task/*/ns/net and /proc/*/fd), bind mounts of it
// (a named netns, in this mount namespace) and this process's sockets in
// it (SIOCGSKNS). Other processes' sockets are not visible; a process that
// exited holds none. Empty means the kernel frees the namespace.
func NetNSHolders(ino uint64) ([]string, error) {
	name := fmt.Sprintf("net:[%d]", ino)
	var held []string
	for _, glob := range []string{"/proc/[0-9]*/task/[0-9]*/ns/net", "/proc/[0-9]*/fd/*"} {
		links, err := filepath.Glob(glob)
		if err != nil {
			return nil, err
		}
		for _, link := range links {
			if target, err := os.Readlink(link); err == nil && target == name {
				held = append(held, link) // a process may exit meanwhile: errors are skipped
			}
		}
	}
	mounts, err := nsfsMounts(name)
	if err != nil {
		return nil, err
	}
	sockets, err := ownSocketsIn(ino)
	return append(append(held, mounts...), sockets...), err
}

// WaitNetNSReleased polls NetNSHolders(ino) until nothing holds the
// namespace or deadline passes, and returns the holders last seen; the
// error wraps poll.ErrTimedOut when some remained. It waits because a
// child any thread of this process forks holds a copy of every
// descriptor until it execs.
func WaitNetNSReleased(ino uint64, deadline time.Time) ([]string, error) {
	var holders []string
	err := poll.Until(deadline, pollInterval, fmt.Sprintf("nothing holding net:[%d]", ino), func() (bool, error) {
		var err error
		holders, err = NetNSHolders(ino)
		return len(holders) == 0, err
	})
	return holders, err
}

// nsfsMounts returns the mount points of name in /proc/self/mountinfo,
// whose fourth field is the mounted root (net:[ino] for an nsfs bind mount).
func nsfsMounts(name string) ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var mounts []string
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		if fields := strings.Fields(lines.Text()); len(fields) > 4 && fields[3] == name {
			mounts = append(mounts, "mount "+fields[4])
		}
	}
	return mounts, lines.Err()
}

// ownSocketsIn returns this process's sockets that belong to namespace ino.
func ownSocketsIn(ino uint64) ([]string, error) {
	fds, err := numberedEntries("/proc/self/fd")
	if err != nil {
		return nil, err
	}
	var sockets []string
	for _, fd := range fds {
		if target, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd)); err != nil || !strings.HasPrefix(target,
			"socket:") {
			continue
		}
		nsfd, err := unix.IoctlRetInt(fd, unix.SIOCGSKNS)
		if errors.Is(err, unix.EBADF) || errors.Is(err, unix.ENOTTY) {
			continue // closed, or reused for something else, meanwhile
		}
		if err != nil {
			return nil, fmt.Errorf("SIOCGSKNS on fd %d: %w", fd, err)
		}
		var st unix.Stat_t
		err = unix.Fstat(nsfd, &st)
		unix.Close(nsfd)
		if err != nil {
			return nil, err
		}
		if st.Ino == ino {
			sockets = append(sockets, fmt.Sprintf("socket fd %d of this process", fd))
		}
	}
	return sockets, nil
}
