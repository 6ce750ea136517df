package why

import (
	"context"
	"sync"

	"github.com/hanzoai/deploy-web/autosync"
	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/planstore"
	"github.com/hanzoai/deploy-web/promotion"
)

// Batch returns a Service for the Apps of one request (an environment's
// list): each source is read once per environment (or run) and its
// answer shared by every App, so a list of N Apps of one environment
// costs the reads of one. Use it for one request only: it never reads a
// source again.
func (s *Service) Batch() *Service {
	o := s.o
	if o.AutoSync != nil {
		o.AutoSync = &onceAutoSync{src: o.AutoSync}
	}
	if o.Promotions != nil {
		o.Promotions = &oncePromotions{src: o.Promotions}
	}
	if o.Runs != nil {
		o.Runs = &onceRuns{src: o.Runs}
	}
	if o.Applied != nil {
		o.Applied = &onceApplied{src: o.Applied}
	}
	if o.Locks != nil {
		o.Locks = &onceLocks{src: o.Locks}
	}
	if o.Soaks != nil {
		o.Soaks = &onceSoaks{src: o.Soaks}
	}
	return New(o)
}

// once keeps the first answer of each key.
type once[T any] struct {
	mu sync.Mutex
	m  map[string]onceResult[T]
}

type onceResult[T any] struct {
	v   T
	err error
}

func (o *once[T]) get(key string, read func() (T, error)) (T, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if r, ok := o.m[key]; ok {
		return r.v, r.err
	}
	v, err := read()
	if o.m == nil {
		o.m = map[string]onceResult[T]{}
	}
	o.m[key] = onceResult[T]{v, err}
	return v, err
}

type statusOK struct {
	st autosync.Status
	ok bool
}

type onceAutoSync struct {
	src AutoSync
	c   once[statusOK]
}

func (o *onceAutoSync) Status(ctx context.Context, env string) (autosync.Status, bool, error) {
	r, err := o.c.get(env, func() (statusOK, error) {
		st, ok, err := o.src.Status(ctx, env)
		return statusOK{st, ok}, err
	})
	return r.st, r.ok, err
}

type oncePromotions struct {
	src Promotions
	c   once[[]promotion.Request]
}

func (o *oncePromotions) List(ctx context.Context, target string) ([]promotion.Request, error) {
	return o.c.get(target, func() ([]promotion.Request, error) { return o.src.List(ctx, target) })
}

type entryFiles struct {
	e     planstore.Entry
	files map[string][]byte
}

type onceRuns struct {
	src  Runs
	list once[[]planstore.Entry]
	one  once[entryFiles]
}

func (o *onceRuns) List(ctx context.Context, env string) ([]planstore.Entry, error) {
	return o.list.get(env, func() ([]planstore.Entry, error) { return o.src.List(ctx, env) })
}

func (o *onceRuns) Get(ctx context.Context, id string) (planstore.Entry, map[string][]byte, error) {
	r, err := o.one.get(id, func() (entryFiles, error) {
		e, files, err := o.src.Get(ctx, id)
		return entryFiles{e, files}, err
	})
	return r.e, r.files, err
}

type onceApplied struct {
	src Applied
	c   once[*planstore.Entry]
}

func (o *onceApplied) LastApplied(ctx context.Context, env string) (*planstore.Entry, error) {
	return o.c.get(env, func() (*planstore.Entry, error) { return o.src.LastApplied(ctx, env) })
}

type onceLocks struct {
	src Locks
	c   once[*deployplan.LockHeldError]
}

func (o *onceLocks) Held(ctx context.Context, env string) (*deployplan.LockHeldError, error) {
	return o.c.get(env, func() (*deployplan.LockHeldError, error) { return o.src.Held(ctx, env) })
}

type onceSoaks struct {
	src Soaks
	c   once[[]promotion.Soaking]
}

func (o *onceSoaks) Soaking(ctx context.Context, target string) ([]promotion.Soaking, error) {
	return o.c.get(target, func() ([]promotion.Soaking, error) { return o.src.Soaking(ctx, target) })
}
