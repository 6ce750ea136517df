// Package promotion is the matrix of versions across environments and the
// rules of moving a version on: which Apps run what where (Build), which
// cells differ from the environment they are promoted from, and the gates
// a promotion must pass (Gates), each a pure function over typed values so
// the handlers, the templates and the tests call the same decision. The
// two-person rule's requests are kept in a ConfigMap (Store, through
// internal/cmcas).
//
// Nothing here reads a cluster or speaks HTTP: the handlers read each
// environment's Apps from its cluster's cache (kubeview) and hand them in.
package promotion
