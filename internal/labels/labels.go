// Package labels holds the labels the cluster sees on deploy-web's own
// objects that more than one package writes or reads: one definition each
// (STYLE rule 15). It imports nothing, so every store can use it.
package labels

// Kind marks deploy-web's own ConfigMaps and says which store a ConfigMap
// belongs to: timeline shards, plan history, freezes, auto-sync pauses,
// promotion requests. A manifest may not carry it (deployplan's
// ReservedName).
const Kind = "deploy-web.hanzo.ai/kind"
