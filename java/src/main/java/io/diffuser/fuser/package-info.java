/**
 * {@link io.diffuser.fuser.Fuser}: merge events of many {@link io.diffuser.fuser.Source}s
 * into one stream and {@link io.diffuser.fuser.Fuser#connect connect} it to an effect.
 */
package io.diffuser.fuser;
