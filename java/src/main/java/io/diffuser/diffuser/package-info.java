/**
 * {@link io.diffuser.diffuser.Diffuser}: build a tree of effects once, then
 * {@link io.diffuser.diffuser.Diffuser#run(Object) run} it with every new model.
 */
package io.diffuser.diffuser;
