package io.diffuser.loop;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * What an {@link Update} returns for one event: maybe a new model, and the effects to
 * run (Mobius's {@code Next}).
 *
 * <p>A {@code Next} without a model leaves the model as it was and publishes nothing;
 * its effects still run.
 *
 * @param <M> the type of models
 * @param <F> the type of effects
 */
public final class Next<M, F> {
  private final boolean hasModel;
  private final M model;
  private final List<F> effects;

  private Next(boolean hasModel, M model, List<F> effects) {
    this.hasModel = hasModel;
    this.model = model;
    this.effects = effects;
  }

  /**
   * A new model and effects.
   *
   * @param model the new model (may be {@code null})
   * @param effects the effects, in order
   * @param <M> the type of models
   * @param <F> the type of effects
   * @return the next
   */
  @SafeVarargs
  public static <M, F> Next<M, F> next(M model, F... effects) {
    List<F> list = new ArrayList<>(Objects.requireNonNull(effects, "effects").length);
    for (F effect : effects) {
      list.add(effect);
    }
    return new Next<>(true, model, copy(list));
  }

  /**
   * A new model and effects.
   *
   * @param model the new model (may be {@code null})
   * @param effects the effects, in order (copied)
   * @param <M> the type of models
   * @param <F> the type of effects
   * @return the next
   */
  public static <M, F> Next<M, F> next(M model, List<? extends F> effects) {
    return new Next<>(true, model, Collections.unmodifiableList(new ArrayList<>(Objects.requireNonNull(effects, "effects"))));
  }

  /**
   * Effects only: the model stays as it was.
   *
   * @param effects the effects, in order
   * @param <M> the type of models
   * @param <F> the type of effects
   * @return the next
   */
  @SafeVarargs
  public static <M, F> Next<M, F> dispatch(F... effects) {
    List<F> list = new ArrayList<>(Objects.requireNonNull(effects, "effects").length);
    for (F effect : effects) {
      list.add(effect);
    }
    return new Next<>(false, null, copy(list));
  }

  /**
   * Neither a new model nor effects.
   *
   * @param <M> the type of models
   * @param <F> the type of effects
   * @return the next
   */
  public static <M, F> Next<M, F> noChange() {
    return new Next<>(false, null, Collections.emptyList());
  }

  private static <F> List<F> copy(List<F> effects) {
    return effects.isEmpty() ? Collections.emptyList() : Collections.unmodifiableList(effects);
  }


  /**
   * Whether this next holds a new model.
   *
   * @return true if it does
   */
  public boolean hasModel() {
    return hasModel;
  }

  /**
   * The new model.
   *
   * @return the model, or {@code null} if there is none (see {@link #hasModel()})
   */
  public M model() {
    return model;
  }

  /**
   * The effects, in order.
   *
   * @return an unmodifiable list
   */
  public List<F> effects() {
    return effects;
  }

  @Override
  public boolean equals(Object other) {
    if (!(other instanceof Next)) {
      return false;
    }
    Next<?, ?> that = (Next<?, ?>) other;
    return hasModel == that.hasModel && Objects.equals(model, that.model) && effects.equals(that.effects);
  }

  @Override
  public int hashCode() {
    return Objects.hash(hasModel, model, effects);
  }

  @Override
  public String toString() {
    return "Next(" + (hasModel ? "model: " + model : "no model") + ", effects: " + effects + ")";
  }
}
