package docstore

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// keyedMutex serialises work on one key inside this process.
type keyedMutex struct {
	mu    sync.Mutex
	locks map[string]*keyLock
}

type keyLock struct {
	mu   sync.Mutex
	refs int
}

func newKeyedMutex() *keyedMutex { return &keyedMutex{locks: map[string]*keyLock{}} }

func (k *keyedMutex) lock(key string) func() {
	k.mu.Lock()
	l := k.locks[key]
	if l == nil {
		l = &keyLock{}
		k.locks[key] = l
	}
	l.refs++
	k.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		k.mu.Lock()
		if l.refs--; l.refs == 0 {
			delete(k.locks, key)
		}
		k.mu.Unlock()
	}
}

// Lock serialises check-then-write sequences on key (such as "is this reference_id
// free?") across goroutines and, through the cache, across kwhouse processes. With the
// cache down, only this process is covered.
func (s *Store) Lock(ctx context.Context, key string) (func(), error) {
	unlockLocal := s.locks.lock(key)
	deadline := time.Now().Add(5 * time.Second)
	for {
		unlockShared, ok, err := s.cache.Lock(ctx, "lock:"+key, 10*time.Second)
		if err == nil {
			return func() {
				if ok {
					unlockShared()
				}
				unlockLocal()
			}, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			unlockLocal()
			return nil, fmt.Errorf("lock %s: %w", key, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
